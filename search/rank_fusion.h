#pragma once
// Reciprocal rank fusion (Cormack et al., 2009): a candidate's fused score is the sum over the ranked
// lists it appears in of 1 / (k + rank), rank counted from 1. It needs no score calibration between
// BM25 and cosine similarity, which live on unrelated scales.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "store/collection.h"

namespace kotae::search {

struct FusedCandidate {
  std::int64_t chunk_id = 0;
  std::int64_t document_id = 0;
  double score = 0;
  // 1-based rank in each input list, 0 where the candidate was absent.
  std::vector<std::size_t> ranks;
};

// Fuses ranked lists (each best first, at most one entry per chunk id), deduplicating by chunk id.
// Ties break by the better best rank, then by chunk id, so the order is deterministic.
std::vector<FusedCandidate> reciprocal_rank_fusion(std::span<const std::vector<store::ScoredChunk>> lists,
                                                   double k = 60.0);

}  // namespace kotae::search
