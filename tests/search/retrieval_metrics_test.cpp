#include "search/retrieval_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kotae::search {
namespace {

TEST(RankDocuments, KeepsEachDocumentAtItsBestChunk) {
  EXPECT_EQ(rank_documents({"a", "b", "a", "c", "b"}), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(RetrievalMetrics, MatchesHandComputedValues) {
  MetricsAccumulator m;
  m.add({"x", "rel", "y"}, {{"rel", 1}});            // rank 2
  m.add({"a", "b"}, {{"r1", 1}, {"r2", 1}});         // nothing found
  m.add({"r1", "z", "r2"}, {{"r1", 1}, {"r2", 1}});  // ranks 1 and 3
  const auto r = m.result();
  EXPECT_EQ(r.queries, 3u);
  EXPECT_NEAR(r.mrr_at_10, (0.5 + 0 + 1) / 3, 1e-12);
  const double ndcg1 = (1 / std::log2(3.0)) / 1.0;
  const double ndcg3 = (1 + 1 / std::log2(4.0)) / (1 + 1 / std::log2(3.0));
  EXPECT_NEAR(r.ndcg_at_10, (ndcg1 + 0 + ndcg3) / 3, 1e-12);
  EXPECT_NEAR(r.recall_at_10, (1 + 0 + 1) / 3.0, 1e-12);
}

TEST(RetrievalMetrics, CountsRecallAt100BeyondTen) {
  std::vector<std::string> ranked;
  for (int i = 0; i < 50; ++i) {
    std::string id = "d";  // not "d" + to_string(i): GCC 12 -O3 warns falsely (-Wrestrict) on that
    id += std::to_string(i);
    ranked.push_back(id);
  }
  MetricsAccumulator m;
  m.add(ranked, {{"d3", 1}, {"d40", 1}});
  const auto r = m.result();
  EXPECT_NEAR(r.recall_at_10, 0.5, 1e-12);
  EXPECT_NEAR(r.recall_at_100, 1.0, 1e-12);
  EXPECT_NEAR(r.mrr_at_10, 0.25, 1e-12);
}

TEST(RetrievalMetrics, SkipsQueriesWithoutRelevantDocuments) {
  MetricsAccumulator m;
  m.add({"a"}, {{"a", 0}});
  EXPECT_EQ(m.result().queries, 0u);
}

}  // namespace
}  // namespace kotae::search
