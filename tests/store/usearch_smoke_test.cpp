// The vector-index library scripts/setup installs compiles with our flags and finds neighbours. The
// index itself arrives with the Ingestion issue; this pins the dependency until then.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <usearch/index_dense.hpp>

namespace {

TEST(Usearch, FindsEachVectorAsItsOwnNearestNeighbour) {
  using namespace unum::usearch;
  constexpr std::size_t kDims = 384, kCount = 1000;
  metric_punned_t metric(kDims, metric_kind_t::cos_k, scalar_kind_t::f32_k);
  auto made = index_dense_t::make(metric);
  ASSERT_TRUE(bool(made)) << made.error.what();
  index_dense_t index = std::move(made.index);
  ASSERT_TRUE(index.try_reserve(kCount));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> vectors(kCount, std::vector<float>(kDims));
  for (std::size_t i = 0; i < kCount; ++i) {
    for (auto& x : vectors[i]) x = normal(rng);
    ASSERT_TRUE(bool(index.add(i, vectors[i].data())));
  }
  EXPECT_EQ(index.size(), kCount);
  for (std::size_t i = 0; i < kCount; i += 97) {
    auto result = index.search(vectors[i].data(), 3);
    ASSERT_TRUE(bool(result));
    ASSERT_GE(result.size(), 1u);
    EXPECT_EQ(result[0].member.key, i);
  }
}

}  // namespace
