#include "search/rank_fusion.h"

#include <gtest/gtest.h>

namespace kotae::search {
namespace {

std::vector<store::ScoredChunk> ranked(std::initializer_list<std::int64_t> ids) {
  std::vector<store::ScoredChunk> list;
  for (auto id : ids) list.push_back({id, id * 10, 0.f});
  return list;
}

TEST(ReciprocalRankFusion, SumsOneOverKPlusRankAndDeduplicates) {
  const std::vector<std::vector<store::ScoredChunk>> lists{ranked({1, 2, 3}), ranked({3, 1, 4})};
  const auto fused = reciprocal_rank_fusion(lists, 60);
  ASSERT_EQ(fused.size(), 4u);      // 1, 2, 3, 4 once each
  EXPECT_EQ(fused[0].chunk_id, 1);  // 1/61 + 1/62
  EXPECT_NEAR(fused[0].score, 1.0 / 61 + 1.0 / 62, 1e-12);
  EXPECT_EQ(fused[1].chunk_id, 3);  // 1/63 + 1/61
  EXPECT_EQ(fused[2].chunk_id, 2);  // 1/62
  EXPECT_EQ(fused[3].chunk_id, 4);  // 1/63
  EXPECT_EQ(fused[0].ranks, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(fused[2].ranks, (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(fused[3].document_id, 40);
}

TEST(ReciprocalRankFusion, TiesBreakByBestRankThenId) {
  // 5 is first in list B, 7 first in list A: equal scores, equal best rank -> lower id first.
  const std::vector<std::vector<store::ScoredChunk>> lists{ranked({7, 5}), ranked({5, 7})};
  const auto fused = reciprocal_rank_fusion(lists, 60);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused[0].chunk_id, 5);
  EXPECT_EQ(fused[1].chunk_id, 7);
}

TEST(ReciprocalRankFusion, SmallKFavoursTopRanks) {
  // With k = 1 a single first place (1/2) beats two third places (2/4) only by the tie rule; with
  // a second place as well it wins outright.
  const std::vector<std::vector<store::ScoredChunk>> lists{ranked({1, 9, 2}), ranked({8, 1, 2})};
  const auto fused = reciprocal_rank_fusion(lists, 1);
  EXPECT_EQ(fused[0].chunk_id, 1);
  EXPECT_NEAR(fused[0].score, 1.0 / 2 + 1.0 / 3, 1e-12);
}

TEST(ReciprocalRankFusion, RepeatedIdInOneListCountsOnce) {
  const std::vector<std::vector<store::ScoredChunk>> lists{ranked({1, 1, 2})};
  const auto fused = reciprocal_rank_fusion(lists, 60);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_NEAR(fused[0].score, 1.0 / 61, 1e-12);
}

TEST(ReciprocalRankFusion, AWeightScalesItsListsShare) {
  const std::vector<std::vector<store::ScoredChunk>> lists{ranked({1, 2}), ranked({2, 1})};
  const double weights[] = {1.0, 3.0};
  const auto fused = reciprocal_rank_fusion(lists, 60, weights);
  EXPECT_EQ(fused[0].chunk_id, 2);  // 1/62 + 3/61 ahead of 1/61 + 3/62
  EXPECT_NEAR(fused[0].score, 1.0 / 62 + 3.0 / 61, 1e-12);
}

std::vector<store::ScoredChunk> scored(std::initializer_list<std::pair<std::int64_t, float>> hits) {
  std::vector<store::ScoredChunk> list;
  for (auto [id, score] : hits) list.push_back({id, id * 10, score});
  return list;
}

TEST(LinearFusion, NormalisesEachListThenSumsWithWeights) {
  // BM25 scores live on their own scale: 12 is the best, 2 the worst of its list.
  const std::vector<std::vector<store::ScoredChunk>> lists{scored({{1, 12.0f}, {2, 7.0f}, {3, 2.0f}}),
                                                           scored({{2, 0.9f}, {3, 0.8f}, {1, 0.4f}})};
  const double weights[] = {0.5, 1.0};
  const auto fused = linear_fusion(lists, weights);
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused[0].chunk_id, 2);  // 0.5 * 0.5 + 1.0
  EXPECT_NEAR(fused[0].score, 1.25, 1e-6);
  EXPECT_EQ(fused[1].chunk_id, 3);  // 0 + 0.8
  EXPECT_NEAR(fused[1].score, 0.8, 1e-6);
  EXPECT_EQ(fused[2].chunk_id, 1);  // 0.5 + 0
  EXPECT_NEAR(fused[2].score, 0.5, 1e-6);
  EXPECT_EQ(fused[0].ranks, (std::vector<std::size_t>{2, 1}));
}

TEST(LinearFusion, AnAbsentCandidateGetsNothingFromThatListAndEqualScoresCountWhole) {
  const std::vector<std::vector<store::ScoredChunk>> lists{scored({{5, 3.0f}, {6, 3.0f}}), scored({{7, 0.5f}})};
  const auto fused = linear_fusion(lists);
  ASSERT_EQ(fused.size(), 3u);
  for (const auto& c : fused) EXPECT_NEAR(c.score, 1.0, 1e-9) << c.chunk_id;  // one list's top each
  EXPECT_EQ(fused[0].chunk_id, 5);                                            // ties: best rank, then id
  EXPECT_EQ(fused[1].chunk_id, 7);
  EXPECT_EQ(fused[2].chunk_id, 6);
}

TEST(LinearFusion, TheRangeComesFromEachListsBestEntriesSoDepthDoesNotMoveTheTop) {
  const std::vector<std::vector<store::ScoredChunk>> shallow{scored({{1, 10.0f}, {2, 6.0f}}),
                                                             scored({{2, 0.9f}, {1, 0.5f}})};
  const std::vector<std::vector<store::ScoredChunk>> deep{scored({{1, 10.0f}, {2, 6.0f}, {3, 1.0f}}),
                                                          scored({{2, 0.9f}, {1, 0.5f}, {3, 0.1f}})};
  const auto top = linear_fusion(shallow, {}, 2);
  const auto all = linear_fusion(deep, {}, 2);
  ASSERT_EQ(all.size(), 3u);
  for (std::size_t i = 0; i < top.size(); ++i) {
    EXPECT_EQ(all[i].chunk_id, top[i].chunk_id);
    EXPECT_NEAR(all[i].score, top[i].score, 1e-9);
  }
  EXPECT_EQ(all[2].chunk_id, 3);  // below both floors: nothing from either list, not a negative score
  EXPECT_NEAR(all[2].score, 0.0, 1e-9);
}

TEST(LinearFusion, APassageBothListsFindAboveTheirFloorCountsMore) {
  // Chunk 2 is second in both lists; chunk 1 tops the vector list alone; chunk 3 is at BM25's floor.
  const std::vector<std::vector<store::ScoredChunk>> lists{scored({{4, 10.0f}, {2, 8.0f}, {3, 2.0f}}),
                                                           scored({{1, 0.9f}, {2, 0.7f}, {3, 0.5f}})};
  const double weights[] = {0.2, 1.0};
  const auto plain = linear_fusion(lists, weights, 50, 0.0);
  EXPECT_EQ(plain[0].chunk_id, 1);  // 1.0 against 0.2 * 0.75 + 0.5 = 0.65
  const auto agreeing = linear_fusion(lists, weights, 50, 0.5);
  ASSERT_EQ(agreeing.size(), 4u);
  EXPECT_EQ(agreeing[0].chunk_id, 1);
  EXPECT_NEAR(agreeing[0].score, 1.0, 1e-9);         // one list only: unchanged
  EXPECT_NEAR(agreeing[1].score, 0.65 * 1.5, 1e-6);  // both lists above their floor
  EXPECT_EQ(agreeing[1].chunk_id, 2);
  const auto strong = linear_fusion(lists, weights, 50, 1.0);
  EXPECT_EQ(strong[0].chunk_id, 2);  // 1.3 ahead of 1.0
  EXPECT_EQ(strong.back().chunk_id, 3);
  EXPECT_NEAR(strong.back().score, 0.0, 1e-9);  // at both floors: no bonus on nothing
}

}  // namespace
}  // namespace kotae::search
