#include "search/rank_fusion.h"

#include <algorithm>
#include <unordered_map>

namespace kotae::search {

namespace {

// Sums each list's contribution(list, index) per chunk, lets finish(candidate) adjust the sum, then
// sorts; ties break by the better best rank, then by chunk id, so the order is deterministic.
template <class Contribution, class Finish>
std::vector<FusedCandidate> fuse(std::span<const std::vector<store::ScoredChunk>> lists, Contribution contribution,
                                 Finish finish) {
  std::vector<FusedCandidate> fused;
  std::unordered_map<std::int64_t, std::size_t> slot;  // chunk id -> index in fused
  for (std::size_t list = 0; list < lists.size(); ++list) {
    for (std::size_t i = 0; i < lists[list].size(); ++i) {
      const auto& hit = lists[list][i];
      auto [it, inserted] = slot.try_emplace(hit.chunk_id, fused.size());
      if (inserted) fused.push_back({hit.chunk_id, hit.document_id, 0.0, std::vector<std::size_t>(lists.size(), 0)});
      auto& candidate = fused[it->second];
      if (candidate.ranks[list] != 0) continue;  // a list repeating a chunk counts it once
      candidate.ranks[list] = i + 1;
      candidate.score += contribution(list, i);
    }
  }
  for (auto& candidate : fused) finish(candidate);
  auto best_rank = [](const FusedCandidate& c) {
    std::size_t best = SIZE_MAX;
    for (auto r : c.ranks)
      if (r != 0) best = std::min(best, r);
    return best;
  };
  std::sort(fused.begin(), fused.end(), [&](const FusedCandidate& a, const FusedCandidate& b) {
    if (a.score != b.score) return a.score > b.score;
    const auto ra = best_rank(a), rb = best_rank(b);
    if (ra != rb) return ra < rb;
    return a.chunk_id < b.chunk_id;
  });
  return fused;
}

double weight_of(std::span<const double> weights, std::size_t list) {
  return list < weights.size() ? weights[list] : 1.0;
}

}  // namespace

std::vector<FusedCandidate> reciprocal_rank_fusion(std::span<const std::vector<store::ScoredChunk>> lists, double k,
                                                   std::span<const double> weights) {
  return fuse(
      lists,
      [&](std::size_t list, std::size_t i) { return weight_of(weights, list) / (k + static_cast<double>(i + 1)); },
      [](FusedCandidate&) {});
}

std::vector<FusedCandidate> linear_fusion(std::span<const std::vector<store::ScoredChunk>> lists,
                                          std::span<const double> weights, std::size_t range_depth,
                                          double agreement_bonus) {
  std::vector<std::pair<double, double>> range;  // each list's lowest and highest score in its best range_depth
  for (const auto& l : lists) {
    const auto end = l.begin() + static_cast<std::ptrdiff_t>(std::min(l.size(), std::max<std::size_t>(range_depth, 1)));
    auto [low, high] =
        std::minmax_element(l.begin(), end, [](const auto& a, const auto& b) { return a.score < b.score; });
    range.emplace_back(l.empty() ? 0.0 : low->score, l.empty() ? 0.0 : high->score);
  }
  auto normalised = [&](std::size_t list, std::size_t i) {
    const auto [low, high] = range[list];
    return high > low ? std::clamp((lists[list][i].score - low) / (high - low), 0.0, 1.0) : 1.0;
  };
  return fuse(
      lists, [&](std::size_t list, std::size_t i) { return weight_of(weights, list) * normalised(list, i); },
      [&](FusedCandidate& candidate) {
        std::size_t agreeing = 0;  // lists that score it above their floor
        for (std::size_t list = 0; list < lists.size(); ++list) {
          if (candidate.ranks[list] != 0 && normalised(list, candidate.ranks[list] - 1) > 0) ++agreeing;
        }
        if (agreeing > 1) candidate.score *= 1 + agreement_bonus * static_cast<double>(agreeing - 1);
      });
}

}  // namespace kotae::search
