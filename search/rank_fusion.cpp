#include "search/rank_fusion.h"

#include <algorithm>
#include <unordered_map>

namespace kotae::search {

std::vector<FusedCandidate> reciprocal_rank_fusion(std::span<const std::vector<store::ScoredChunk>> lists, double k) {
  std::vector<FusedCandidate> fused;
  std::unordered_map<std::int64_t, std::size_t> slot;  // chunk id -> index in fused
  for (std::size_t list = 0; list < lists.size(); ++list) {
    for (std::size_t i = 0; i < lists[list].size(); ++i) {
      const auto& hit = lists[list][i];
      const std::size_t rank = i + 1;
      auto [it, inserted] = slot.try_emplace(hit.chunk_id, fused.size());
      if (inserted) fused.push_back({hit.chunk_id, hit.document_id, 0.0, std::vector<std::size_t>(lists.size(), 0)});
      auto& candidate = fused[it->second];
      if (candidate.ranks[list] != 0) continue;  // a list repeating a chunk counts it once
      candidate.ranks[list] = rank;
      candidate.score += 1.0 / (k + static_cast<double>(rank));
    }
  }
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

}  // namespace kotae::search
