// The vector index on its own: adds, removes and slot reuse, capacity growth, filtered search (exact
// and graph walk), concurrent searches, and its file (saved with a change-log position, refused when
// damaged, of another format version or of another dimension).

#include "store/vector_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "tests/store/store_test_support.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

constexpr std::size_t kDim = 32;

std::vector<float> vectors_for(std::size_t count, std::mt19937& rng) {
  std::vector<float> vectors;
  for (std::size_t i = 0; i < count; ++i) {
    auto vector = testing::random_unit_vector(kDim, rng);
    vectors.insert(vectors.end(), vector.begin(), vector.end());
  }
  return vectors;
}

TEST(VectorIndex, FindsEachVectorAndForgetsRemovedOnes) {
  std::mt19937 rng(1);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  const auto vectors = vectors_for(300, rng);
  std::vector<std::int64_t> keys;
  for (std::int64_t key = 1; key <= 300; ++key) keys.push_back(key * 10);
  ASSERT_OK(index.add_many(keys, vectors, 2));
  EXPECT_EQ(index.size(), 300u);
  for (std::size_t i = 0; i < 300; i += 37) {
    auto found = index.search(std::span<const float>(vectors).subspan(i * kDim, kDim), 1);
    ASSERT_OK(found);
    ASSERT_EQ(found->size(), 1u);
    EXPECT_EQ((*found)[0].key, keys[i]);
    EXPECT_NEAR((*found)[0].similarity, 1.0f, 1e-5);
  }
  // Remove half, then add new keys into the freed slots and beyond.
  for (std::size_t i = 0; i < 300; i += 2) EXPECT_TRUE(index.remove(keys[i]));
  EXPECT_FALSE(index.remove(keys[0]));
  EXPECT_EQ(index.size(), 150u);
  const auto more = vectors_for(400, rng);
  for (std::size_t i = 0; i < 400; ++i) {
    ASSERT_OK(index.add(static_cast<std::int64_t>(100000 + i), std::span<const float>(more).subspan(i * kDim, kDim)));
  }
  EXPECT_EQ(index.size(), 550u);
  EXPECT_FALSE(index.contains(keys[0]));
  EXPECT_TRUE(index.contains(keys[1]));
  auto all = index.keys();
  EXPECT_EQ(all.size(), 550u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  auto found = index.search(std::span<const float>(vectors).subspan(0, kDim), 550);
  ASSERT_OK(found);
  for (const auto& neighbour : *found) EXPECT_NE(neighbour.key, keys[0]);
  std::vector<float> stored(kDim);
  ASSERT_TRUE(index.get(100399, stored));
  EXPECT_NEAR(cosine_similarity(stored, std::span<const float>(more).subspan(399 * kDim, kDim)), 1.0f, 1e-5);
  EXPECT_FALSE(index.get(keys[0], stored));

  // A predicate restricts what comes back.
  const VectorIndex::Predicate odd = [](std::int64_t key) { return key % 2 == 1; };
  auto filtered = index.search(std::span<const float>(more).subspan(0, kDim), 20, &odd);
  ASSERT_OK(filtered);
  ASSERT_EQ(filtered->size(), 20u);
  for (const auto& neighbour : *filtered) EXPECT_EQ(neighbour.key % 2, 1);
}

TEST(VectorIndex, SavesAndLoadsWithItsLogPosition) {
  testing::TempDir temp;
  std::mt19937 rng(2);
  auto made = VectorIndex::create(kDim, VectorIndexSettings{12, 64, 40});
  ASSERT_OK(made);
  const auto vectors = vectors_for(500, rng);
  std::vector<std::int64_t> keys(500);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK((*made)->add_many(keys, vectors, 1));
  (*made)->remove(7);
  const auto path = temp.path() / "vectors.index";
  ASSERT_OK((*made)->save(path, 4242));
  EXPECT_FALSE(std::filesystem::exists(temp.path() / ("vectors.index.tmp-" + std::to_string(::getpid()))));

  auto loaded = VectorIndex::load(path, kDim, VectorIndexSettings{16, 64, 40});
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->log_position, 4242);
  EXPECT_EQ(loaded->index->size(), 499u);
  EXPECT_EQ(loaded->index->settings().connectivity, 12u);  // the file's, not the one asked for
  EXPECT_FALSE(loaded->index->contains(7));
  const auto query = testing::random_unit_vector(kDim, rng);
  auto before = (*made)->search(query, 10);
  auto after = loaded->index->search(query, 10);
  ASSERT_OK(before);
  ASSERT_OK(after);
  ASSERT_EQ(before->size(), after->size());
  for (std::size_t i = 0; i < before->size(); ++i) EXPECT_EQ((*before)[i].key, (*after)[i].key);
  // It keeps working after loading: removed slots are reused.
  ASSERT_OK(loaded->index->add(1000, std::span<const float>(vectors).subspan(0, kDim)));
  EXPECT_EQ(loaded->index->size(), 500u);

  auto other_dimension = VectorIndex::load(path, kDim * 2);
  ASSERT_FALSE(other_dimension.ok());
  EXPECT_EQ(other_dimension.error().code, ErrorCode::corrupt);
  auto missing = VectorIndex::load(temp.path() / "absent.index", kDim);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  {
    std::ofstream garbage(path, std::ios::binary | std::ios::trunc);
    garbage << "KOTAEVEC but then nothing that makes sense";
  }
  auto damaged = VectorIndex::load(path, kDim);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().code, ErrorCode::corrupt);
}

// Vectors like sentence embeddings: a few underlying directions (16) spread over 384 dimensions,
// plus noise. (Uniformly random vectors have no such structure; on them every graph index needs
// a search close to exhaustive, which is why small indexes are searched exactly.)
std::vector<float> embedding_like(std::size_t count, std::size_t dimension, const std::vector<float>& basis,
                                  std::mt19937& rng) {
  const std::size_t latent = basis.size() / dimension;
  std::normal_distribution<float> normal;
  std::vector<float> vectors(count * dimension);
  std::vector<float> z(latent);
  for (std::size_t n = 0; n < count; ++n) {
    for (auto& x : z) x = normal(rng);
    for (std::size_t i = 0; i < dimension; ++i) {
      float value = 0.3f * normal(rng);
      for (std::size_t j = 0; j < latent; ++j) value += z[j] * basis[j * dimension + i];
      vectors[n * dimension + i] = value;
    }
  }
  return vectors;
}

TEST(VectorIndex, TheGraphReachesRecall098OnEmbeddingLikeVectors) {
  constexpr std::size_t kDimension = 384, kCount = 5000, kQueries = 200, kLatent = 16;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> basis(kLatent * kDimension);
  for (auto& x : basis) x = normal(rng);
  const auto vectors = embedding_like(kCount, kDimension, basis, rng);
  const auto queries = embedding_like(kQueries, kDimension, basis, rng);
  auto made = VectorIndex::create(kDimension);  // the default graph settings
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);  // always walk the graph
  std::vector<std::int64_t> keys(kCount);
  for (std::size_t i = 0; i < kCount; ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK(index.add_many(keys, vectors, 2));
  std::size_t hits = 0;
  for (std::size_t q = 0; q < kQueries; ++q) {
    const auto query = std::span<const float>(queries).subspan(q * kDimension, kDimension);
    auto exact = index.search_exact(query, 10);
    auto approximate = index.search(query, 10);
    ASSERT_OK(exact);
    ASSERT_OK(approximate);
    ASSERT_EQ(approximate->size(), 10u);
    for (const auto& found : *approximate) {
      hits += std::count_if(exact->begin(), exact->end(), [&](const Neighbour& n) { return n.key == found.key; });
    }
  }
  const double recall = double(hits) / double(kQueries * 10);
  std::printf("graph recall@10, embedding-like vectors, M=16 ef_construction=128 ef_search=64: %.4f\n", recall);
  RecordProperty("recall_at_10", std::to_string(recall));
  EXPECT_GE(recall, 0.98);
}

TEST(VectorIndex, AnEmptyIndexSearchesToNothingAndSaves) {
  testing::TempDir temp;
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  std::vector<float> query(kDim, 0.5f);
  auto found = (*made)->search(query, 5);
  ASSERT_OK(found);
  EXPECT_TRUE(found->empty());
  ASSERT_OK((*made)->save(temp.path() / "empty.index", 0));
  auto loaded = VectorIndex::load(temp.path() / "empty.index", kDim);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->index->size(), 0u);
  ASSERT_OK(loaded->index->add(1, query));
  EXPECT_EQ(loaded->index->size(), 1u);
}

std::span<const float> row(const std::vector<float>& vectors, std::size_t i, std::size_t dimension = kDim) {
  return std::span<const float>(vectors).subspan(i * dimension, dimension);
}

std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The file's checksum as the index computes it (FNV-1a 64 over 64-bit words in four lanes, the lanes
// and the length folded at the end, over every byte before the checksum, which ends the file), so that
// a test can damage the file behind a checksum that still matches.
void reseal(std::vector<char>& file) {
  constexpr std::uint64_t kOffset = 0xcbf29ce484222325ull, kPrime = 0x100000001b3ull;
  std::uint64_t lanes[4] = {kOffset, kOffset ^ 1, kOffset ^ 2, kOffset ^ 3};
  const std::size_t checked = file.size() - 8;
  std::vector<unsigned char> padded(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(checked));
  padded.resize((checked + 31) / 32 * 32, 0);
  for (std::size_t block = 0; block < padded.size(); block += 32) {
    for (std::size_t lane = 0; lane < 4; ++lane) {
      std::uint64_t word;
      std::memcpy(&word, padded.data() + block + lane * 8, 8);
      lanes[lane] = (lanes[lane] ^ word) * kPrime;
    }
  }
  std::uint64_t state = kOffset;
  for (const std::uint64_t lane : lanes) state = (state ^ lane) * kPrime;
  state = (state ^ checked) * kPrime;
  std::memcpy(file.data() + checked, &state, sizeof state);
}

// The trailer's fields, from the end of the file.
constexpr std::size_t kTrailer = 64;
constexpr std::size_t kVersionAt = 8, kLogPositionAt = 16, kGraphBytesAt = 24, kLiveKeysAt = 32, kRemovedKeysAt = 40;

TEST(VectorIndex, ARemovedKeyCanBeAddedAgainWithAnotherVector) {
  std::mt19937 rng(4);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);  // walk the graph
  const auto vectors = vectors_for(400, rng);
  std::vector<std::int64_t> keys(400);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK(index.add_many(keys, vectors, 2));

  // As a log replay does: drop a key, then add it again from its (here: new) embedding.
  const auto replacement = vectors_for(2, rng);
  EXPECT_TRUE(index.remove(7));
  EXPECT_FALSE(index.contains(7));
  ASSERT_OK(index.add(7, row(replacement, 0)));
  EXPECT_TRUE(index.contains(7));
  EXPECT_EQ(index.size(), 400u);
  std::vector<float> stored(kDim);
  ASSERT_TRUE(index.get(7, stored));
  EXPECT_NEAR(cosine_similarity(stored, row(replacement, 0)), 1.0f, 1e-5);
  auto found = index.search(row(replacement, 0), 1);
  ASSERT_OK(found);
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].key, 7);
  auto old = index.search(row(vectors, 6), 1);
  ASSERT_OK(old);
  EXPECT_NE((*old)[0].key, 7);

  // In one batch with new keys, and with a removed key that is not added again.
  EXPECT_TRUE(index.remove(8));
  EXPECT_TRUE(index.remove(9));
  const std::vector<std::int64_t> batch = {1000, 8, 1001};
  const auto batch_vectors = vectors_for(3, rng);
  ASSERT_OK(index.add_many(batch, batch_vectors, 2));
  EXPECT_EQ(index.size(), 401u);
  EXPECT_TRUE(index.contains(8));
  EXPECT_FALSE(index.contains(9));
  for (std::size_t i = 0; i < batch.size(); ++i) {
    auto hit = index.search(row(batch_vectors, i), 1);
    ASSERT_OK(hit);
    EXPECT_EQ((*hit)[0].key, batch[i]);
  }
  const auto all = index.keys();
  EXPECT_EQ(all.size(), 401u);
  EXPECT_FALSE(std::binary_search(all.begin(), all.end(), 9));

  // A key that is there already is refused, and the index is left as it was.
  auto twice = index.add_many(std::vector<std::int64_t>{2000, 8}, vectors_for(2, rng), 1);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::invalid_argument);
  EXPECT_FALSE(index.contains(2000));
  EXPECT_EQ(index.size(), 401u);
}

// hnswlib's replace_deleted puts an addition into any removed node; a removed key added again that way
// would leave its old node carrying it too, and lose its new node's entry when another addition takes
// the old one (nmslib/hnswlib#541). The index gives such a key its own node back, and forgets removed
// keys whose node was taken, in memory and in its file.
TEST(VectorIndex, ARemovedKeyAddedAgainNeverLeavesASecondNodeBehind) {
  testing::TempDir temp;
  std::mt19937 rng(10);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);  // the graph, and vectors read back from hnswlib
  const auto vectors = vectors_for(200, rng);
  std::vector<std::int64_t> keys(200);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK(index.add_many(keys, vectors, 2));

  const auto fresh = vectors_for(4, rng);
  for (std::int64_t key = 10; key <= 50; key += 10) EXPECT_TRUE(index.remove(key));
  ASSERT_OK(index.add(30, row(fresh, 0)));  // its own node back, whichever hnswlib would pick
  ASSERT_OK(index.add_many(std::vector<std::int64_t>{1000, 1001}, std::span<const float>(fresh).subspan(kDim, 2 * kDim),
                           2));  // two of the four other removed nodes
  EXPECT_EQ(index.size(), 198u);
  std::vector<float> stored(kDim);
  ASSERT_TRUE(index.get(30, stored));
  EXPECT_NEAR(cosine_similarity(stored, row(fresh, 0)), 1.0f, 1e-5);
  auto near_30 = index.search(row(fresh, 0), 5);
  ASSERT_OK(near_30);
  EXPECT_EQ((*near_30)[0].key, 30);
  EXPECT_EQ(std::count_if(near_30->begin(), near_30->end(), [](const Neighbour& n) { return n.key == 30; }), 1);

  // Saved and loaded: the removed keys still known, added again into their own nodes or new ones.
  const auto path = temp.path() / "vectors.index";
  ASSERT_OK(index.save(path, 5));
  auto loaded = VectorIndex::load(path, kDim);
  ASSERT_OK(loaded);
  VectorIndex& again = *loaded->index;
  again.set_exact_search_below(0);
  EXPECT_EQ(again.size(), 198u);
  const auto later = vectors_for(4, rng);
  const std::vector<std::int64_t> returning = {10, 20, 40, 50};  // two nodes left for four keys
  ASSERT_OK(again.add_many(returning, later, 2));
  EXPECT_EQ(again.size(), 202u);
  for (std::size_t i = 0; i < returning.size(); ++i) {
    ASSERT_TRUE(again.get(returning[i], stored)) << returning[i];
    EXPECT_NEAR(cosine_similarity(stored, row(later, i)), 1.0f, 1e-5) << returning[i];
    auto found = again.search(row(later, i), 3);
    ASSERT_OK(found);
    EXPECT_EQ((*found)[0].key, returning[i]);
  }
  // Every key can be removed, once, and is then gone from searches.
  for (const std::int64_t key : {std::int64_t{30}, std::int64_t{10}, std::int64_t{1000}}) {
    EXPECT_TRUE(again.remove(key)) << key;
    EXPECT_FALSE(again.remove(key)) << key;
  }
  auto all = again.search(row(fresh, 0), 202);
  ASSERT_OK(all);
  EXPECT_EQ(all->size(), 199u);
  std::set<std::int64_t> seen;
  for (const auto& n : *all) {
    EXPECT_TRUE(seen.insert(n.key).second) << "key " << n.key << " twice";
    EXPECT_TRUE(n.key != 30 && n.key != 10 && n.key != 1000) << n.key;
  }
  EXPECT_EQ(again.keys().size(), 199u);
}

TEST(VectorIndex, GrowsPastItsFirstCapacity) {
  // A new index has room for 1,024 vectors; one by one and in batches it grows past that.
  std::mt19937 rng(5);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);
  constexpr std::size_t kOneByOne = 1500, kBatch = 3000;
  const auto vectors = vectors_for(kOneByOne + kBatch, rng);
  for (std::size_t i = 0; i < kOneByOne; ++i) ASSERT_OK(index.add(static_cast<std::int64_t>(i), row(vectors, i)));
  std::vector<std::int64_t> keys(kBatch);
  for (std::size_t i = 0; i < kBatch; ++i) keys[i] = static_cast<std::int64_t>(kOneByOne + i);
  ASSERT_OK(index.add_many(keys, std::span<const float>(vectors).subspan(kOneByOne * kDim), 2));
  EXPECT_EQ(index.size(), kOneByOne + kBatch);
  std::size_t found_itself = 0;
  for (std::size_t i = 0; i < kOneByOne + kBatch; i += 7) {
    auto found = index.search(row(vectors, i), 1);
    ASSERT_OK(found);
    found_itself += !found->empty() && (*found)[0].key == static_cast<std::int64_t>(i);
  }
  const std::size_t probes = (kOneByOne + kBatch + 6) / 7;
  EXPECT_GE(found_itself, probes * 99 / 100) << "of " << probes;
  std::vector<float> stored(kDim);
  ASSERT_TRUE(index.get(4499, stored));
  EXPECT_NEAR(cosine_similarity(stored, row(vectors, 4499)), 1.0f, 1e-5);
}

TEST(VectorIndex, RemovedNodesAreReusedAndSizeCountsLiveKeysOnly) {
  testing::TempDir temp;
  std::mt19937 rng(6);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);
  const auto vectors = vectors_for(600, rng);
  std::vector<std::int64_t> keys(600);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK(index.add_many(keys, vectors, 2));
  ASSERT_OK(index.save(temp.path() / "before.index", 1));

  // Rounds of removing 200 and adding 200 new keys (as re-ingesting documents does): the graph keeps
  // its 600 nodes, so the saved file keeps its size exactly (a reused node keeps its levels).
  std::set<std::int64_t> live(keys.begin(), keys.end());
  std::int64_t next_key = 10000;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::int64_t> removed(live.begin(), std::next(live.begin(), 200));
    for (const std::int64_t key : removed) {
      EXPECT_TRUE(index.remove(key));
      live.erase(key);
    }
    EXPECT_EQ(index.size(), 400u);
    EXPECT_EQ(index.keys().size(), 400u);
    std::vector<std::int64_t> added(200);
    for (auto& key : added) {
      key = next_key++;
      live.insert(key);
    }
    const auto added_vectors = vectors_for(200, rng);
    ASSERT_OK(index.add_many(added, added_vectors, 2));
    EXPECT_EQ(index.size(), 600u);
    for (std::size_t i = 0; i < added.size(); i += 10) {
      auto found = index.search(row(added_vectors, i), 1);
      ASSERT_OK(found);
      EXPECT_EQ((*found)[0].key, added[i]);
    }
  }
  const auto all = index.keys();
  EXPECT_EQ(std::vector<std::int64_t>(live.begin(), live.end()), all);
  ASSERT_OK(index.save(temp.path() / "after.index", 2));
  EXPECT_EQ(std::filesystem::file_size(temp.path() / "after.index"),
            std::filesystem::file_size(temp.path() / "before.index"));

  // Loaded, the removed nodes are known again and reused.
  EXPECT_TRUE(index.remove(all[0]));
  ASSERT_OK(index.save(temp.path() / "one-removed.index", 3));
  auto loaded = VectorIndex::load(temp.path() / "one-removed.index", kDim);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->index->size(), 599u);
  EXPECT_FALSE(loaded->index->contains(all[0]));
  ASSERT_OK(loaded->index->add(all[0], row(vectors, 0)));
  EXPECT_EQ(loaded->index->size(), 600u);
  ASSERT_OK(loaded->index->save(temp.path() / "reloaded.index", 4));
  EXPECT_EQ(std::filesystem::file_size(temp.path() / "reloaded.index"),
            std::filesystem::file_size(temp.path() / "before.index"));
}

TEST(VectorIndex, ADamagedFileIsRefusedNeverTrusted) {
  testing::TempDir temp;
  std::mt19937 rng(7);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  const auto vectors = vectors_for(300, rng);
  std::vector<std::int64_t> keys(300);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK((*made)->add_many(keys, vectors, 1));
  const auto path = temp.path() / "vectors.index";
  ASSERT_OK((*made)->save(path, 77));
  const std::vector<char> good = read_bytes(path);
  ASSERT_GT(good.size(), 1000u);
  ASSERT_OK(VectorIndex::load(path, kDim));
  const std::size_t trailer = good.size() - kTrailer;

  // `why`: what the error message must say (the check that caught it).
  auto expect_corrupt = [&](const std::vector<char>& bytes, const char* what, const std::string& why) {
    write_bytes(path, bytes);
    auto loaded = VectorIndex::load(path, kDim);
    ASSERT_FALSE(loaded.ok()) << what;
    EXPECT_EQ(loaded.error().code, ErrorCode::corrupt) << what << ": " << loaded.error().message;
    EXPECT_NE(loaded.error().message.find(why), std::string::npos) << what << ": " << loaded.error().message;
  };
  expect_corrupt(std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2)),
                 "truncated", "no trailer at its end");
  expect_corrupt(std::vector<char>(good.begin(), good.begin() + 20), "shorter than its trailer",
                 "shorter than its trailer");
  for (const std::size_t at : {std::size_t{60}, good.size() / 2, trailer - 1, good.size() - 1}) {
    auto flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    expect_corrupt(flipped, "one flipped byte", "checksum mismatch");
  }
  {
    auto position = good;
    position[trailer + kLogPositionAt] = static_cast<char>(position[trailer + kLogPositionAt] ^ 0x01);
    expect_corrupt(position, "a flipped log position", "checksum mismatch");
  }
  // Damage behind a checksum that matches: the trailer's sizes and the keys are still checked against
  // the file and the graph before anything is used.
  auto with_field = [&](std::size_t offset, const void* value, std::size_t length) {
    auto bytes = good;
    std::memcpy(bytes.data() + offset, value, length);
    reseal(bytes);
    return bytes;
  };
  const std::uint32_t newer = 4;
  expect_corrupt(with_field(trailer + kVersionAt, &newer, sizeof newer), "another format version", "format version 4");
  const std::uint64_t graph_bytes = 1000;
  expect_corrupt(with_field(trailer + kGraphBytesAt, &graph_bytes, sizeof graph_bytes), "a graph size past the file",
                 "does not match its trailer");
  {
    // 299 live keys and 1 removed where the graph has 300 live nodes.
    const std::uint64_t live = 299, removed = 1;
    auto bytes = good;
    std::memcpy(bytes.data() + trailer + kLiveKeysAt, &live, sizeof live);
    std::memcpy(bytes.data() + trailer + kRemovedKeysAt, &removed, sizeof removed);
    reseal(bytes);
    expect_corrupt(bytes, "keys that disagree with the graph", "its keys do not match its graph");
  }
  // hnswlib's own checks of its file: an element count that runs past it.
  const std::size_t huge_count = std::size_t{1} << 40;
  expect_corrupt(with_field(16, &huge_count, sizeof huge_count), "an element count past the file",
                 "hnswlib cannot read its graph");
  // (A file that passes the checksum is otherwise hnswlib's to trust: it offers no check of a graph's
  // links, so damage inside them is caught by the checksum or not at all.)

  write_bytes(path, good);
  auto loaded = VectorIndex::load(path, kDim);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->log_position, 77);
  EXPECT_EQ(loaded->index->size(), 300u);
}

// A file from an older Kotae (format version 1, usearch's, or 2, hnswlib 0.6's layout read and written
// field by field: a 40-byte header first, magic and version, then the payload) is refused as corrupt,
// naming its version, so that the collection rebuilds the index from its database once.
TEST(VectorIndex, AFileOfAnOlderFormatIsRefusedForARebuild) {
  testing::TempDir temp;
  const auto path = temp.path() / "vectors.index";
  for (const std::uint32_t version : {1u, 2u}) {
    // The old header (magic, version, dimension, log position, payload size, FNV-1a checksum), then a
    // payload as long as a small graph's.
    std::vector<char> file(40 + 4096, '\0');
    std::memcpy(file.data(), "KOTAEVEC", 8);
    std::memcpy(file.data() + 8, &version, sizeof version);
    const std::uint32_t dimension = kDim;
    std::memcpy(file.data() + 12, &dimension, sizeof dimension);
    const std::int64_t log_position = 12;
    std::memcpy(file.data() + 16, &log_position, sizeof log_position);
    const std::uint64_t payload = 4096;
    std::memcpy(file.data() + 24, &payload, sizeof payload);
    std::uint64_t state = 0xcbf29ce484222325ull;
    auto update = [&](const char* data, std::size_t length) {
      for (std::size_t i = 0; i < length; ++i) state = (state ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ull;
    };
    update(file.data() + 40, payload);
    update(file.data(), 32);
    std::memcpy(file.data() + 32, &state, sizeof state);
    write_bytes(path, file);

    auto loaded = VectorIndex::load(path, kDim);
    ASSERT_FALSE(loaded.ok()) << "version " << version;
    EXPECT_EQ(loaded.error().code, ErrorCode::corrupt) << loaded.error().message;
    EXPECT_NE(loaded.error().message.find("format version " + std::to_string(version) + ", written by an older Kotae"),
              std::string::npos)
        << loaded.error().message;
  }
}

TEST(VectorIndex, AFilteredGraphWalkReturnsTheNearestAllowedKeys) {
  constexpr std::size_t kDimension = 384, kCount = 4000, kQueries = 50, kLatent = 16;
  std::mt19937 rng(8);
  std::normal_distribution<float> normal;
  std::vector<float> basis(kLatent * kDimension);
  for (auto& x : basis) x = normal(rng);
  const auto vectors = embedding_like(kCount, kDimension, basis, rng);
  const auto queries = embedding_like(kQueries, kDimension, basis, rng);
  auto made = VectorIndex::create(kDimension);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);
  std::vector<std::int64_t> keys(kCount);
  for (std::size_t i = 0; i < kCount; ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK(index.add_many(keys, vectors, 2));
  for (std::size_t i = 0; i < kCount; i += 3) index.remove(keys[i]);  // removed nodes are skipped too

  for (const std::int64_t modulus : {2, 20}) {  // half the keys, and 5 %
    const VectorIndex::Predicate allow = [modulus](std::int64_t key) { return key % modulus == 0; };
    std::size_t hits = 0, expected = 0;
    for (std::size_t q = 0; q < kQueries; ++q) {
      const auto query = row(queries, q, kDimension);
      auto all = index.search_exact(query, kCount);
      ASSERT_OK(all);
      std::vector<std::int64_t> truth;
      for (const auto& n : *all) {
        if (allow(n.key) && truth.size() < 10) truth.push_back(n.key);
      }
      auto found = index.search(query, 10, &allow);
      ASSERT_OK(found);
      EXPECT_EQ(found->size(), 10u);
      for (const auto& n : *found) {
        EXPECT_TRUE(allow(n.key)) << n.key;
        EXPECT_TRUE(index.contains(n.key)) << n.key;
        hits += std::count(truth.begin(), truth.end(), n.key);
      }
      EXPECT_TRUE(std::is_sorted(found->begin(), found->end(),
                                 [](const Neighbour& a, const Neighbour& b) { return a.similarity > b.similarity; }));
      expected += truth.size();
    }
    const double recall = double(hits) / double(expected);
    std::printf("filtered graph walk recall@10, 1 key in %lld allowed: %.4f\n", static_cast<long long>(modulus),
                recall);
    EXPECT_GE(recall, 0.95) << "1 key in " << modulus;
  }
}

TEST(VectorIndex, SearchesRunConcurrently) {
  std::mt19937 rng(9);
  auto made = VectorIndex::create(kDim);
  ASSERT_OK(made);
  VectorIndex& index = **made;
  index.set_exact_search_below(0);
  const auto vectors = vectors_for(2000, rng);
  std::vector<std::int64_t> keys(2000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i + 1);
  ASSERT_OK(index.add_many(keys, vectors, 2));
  for (std::size_t i = 0; i < keys.size(); i += 5) index.remove(keys[i]);
  const auto queries = vectors_for(64, rng);
  std::vector<std::vector<std::int64_t>> alone(64);
  const VectorIndex::Predicate even = [](std::int64_t key) { return key % 2 == 0; };
  auto answer = [&](std::size_t q) {
    auto found = index.search(row(queries, q), 10, q % 2 ? &even : nullptr);
    std::vector<std::int64_t> result;
    if (found) {
      for (const auto& n : *found) result.push_back(n.key);
    }
    return result;
  };
  for (std::size_t q = 0; q < 64; ++q) alone[q] = answer(q);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        for (std::size_t q = t; q < 64; q += 4) mismatches[t] += answer(q) != alone[q];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::size_t t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  for (const auto& result : alone) EXPECT_EQ(result.size(), 10u);
}

}  // namespace
}  // namespace kotae::store
