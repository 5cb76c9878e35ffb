#include <gtest/gtest.h>

#include <algorithm>

#include "model/bert_batch.h"

namespace kotae {
namespace {

std::vector<text::Encoding> of_lengths(const std::vector<std::size_t>& lengths) {
  std::vector<text::Encoding> out(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) out[i].ids.assign(lengths[i], 1);
  return out;
}

TEST(PlanLengthRuns, CoversEveryRowOnceLongestFirstWithinLimits) {
  const auto encodings = of_lengths({10, 200, 12, 190, 11, 100, 9, 195});
  const auto runs = plan_length_runs(encodings, {.max_items = 2, .max_tokens = 1000});
  std::vector<std::size_t> seen;
  for (const auto& run : runs) {
    EXPECT_LE(run.size(), 2u);
    seen.insert(seen.end(), run.begin(), run.end());
  }
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 7, 3, 5, 2, 4, 0, 6}));  // longest first, stable
}

TEST(PlanLengthRuns, TokenBudgetAndLengthRatioCloseRuns) {
  const auto encodings = of_lengths({100, 100, 100, 60, 59});
  // 250 padded tokens at width 100: two rows per run.
  EXPECT_EQ(plan_length_runs(encodings, {.max_items = 64, .max_tokens = 250}).front().size(), 2u);
  // Rows below 0.75 of the run's longest start a new run.
  const auto runs = plan_length_runs(encodings, {.max_items = 64, .max_tokens = 100000, .min_length_ratio = 0.75});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(runs[1], (std::vector<std::size_t>{3, 4}));
  EXPECT_TRUE(plan_length_runs(of_lengths({}), {}).empty());
}

}  // namespace
}  // namespace kotae
