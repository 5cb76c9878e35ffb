#include "search/retrieval_metrics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

namespace kotae::search {

std::vector<std::string> rank_documents(const std::vector<std::string>& chunk_documents) {
  std::vector<std::string> ranked;
  std::unordered_set<std::string> seen;
  for (const auto& id : chunk_documents)
    if (seen.insert(id).second) ranked.push_back(id);
  return ranked;
}

void MetricsAccumulator::add(const std::vector<std::string>& ranked, const Judgements& judgements) {
  std::vector<int> ideal;
  for (const auto& [id, grade] : judgements)
    if (grade > 0) ideal.push_back(grade);
  if (ideal.empty()) return;
  std::sort(ideal.begin(), ideal.end(), std::greater<>());

  auto grade_of = [&](const std::string& id) {
    auto it = judgements.find(id);
    return it == judgements.end() ? 0 : std::max(it->second, 0);
  };
  double reciprocal_rank = 0, dcg = 0, ideal_dcg = 0;
  std::size_t found_10 = 0, found_100 = 0;
  for (std::size_t i = 0; i < ranked.size() && i < 100; ++i) {
    const int grade = grade_of(ranked[i]);
    if (grade == 0) continue;
    if (i < 10) {
      if (reciprocal_rank == 0) reciprocal_rank = 1.0 / double(i + 1);
      dcg += grade / std::log2(double(i + 2));
      ++found_10;
    }
    ++found_100;
  }
  for (std::size_t i = 0; i < ideal.size() && i < 10; ++i) ideal_dcg += ideal[i] / std::log2(double(i + 2));

  sum_.mrr_at_10 += reciprocal_rank;
  sum_.ndcg_at_10 += dcg / ideal_dcg;
  sum_.recall_at_10 += double(found_10) / double(ideal.size());
  sum_.recall_at_100 += double(found_100) / double(ideal.size());
  ++sum_.queries;
}

RetrievalMetrics MetricsAccumulator::result() const {
  RetrievalMetrics mean = sum_;
  if (sum_.queries == 0) return mean;
  const double n = double(sum_.queries);
  mean.mrr_at_10 /= n;
  mean.ndcg_at_10 /= n;
  mean.recall_at_10 /= n;
  mean.recall_at_100 /= n;
  return mean;
}

}  // namespace kotae::search
