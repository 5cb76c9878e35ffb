#pragma once
// Fusion of ranked lists (BM25's and the vector index's) into one.
//   Reciprocal rank fusion (Cormack et al., 2009): a candidate's fused score is the sum over the lists
//   it appears in of weight / (k + rank), rank counted from 1. It needs no score calibration between
//   BM25 and cosine similarity, which live on unrelated scales.
//   Linear: each list's scores min-max normalised to [0, 1] over the list's best `range_depth` entries
//   (deeper ones below that floor count 0), then summed with weights; a candidate absent from a list
//   gets 0 from it. Keeps how far ahead a candidate is, which ranks lose. The fixed range depth makes
//   the fused top the same however deep the caller asks (eval asks 300 deep, a search 50). A candidate
//   that several lists score above their floor has its sum multiplied by 1 + agreement_bonus for each
//   list past the first (CombMNZ's idea, Fox and Shaw, 1994, softened): two retrievers that find the
//   same passage by different evidence are more often right than either alone.

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
// `weights`: one per list (empty: 1 each).
std::vector<FusedCandidate> reciprocal_rank_fusion(std::span<const std::vector<store::ScoredChunk>> lists,
                                                   double k = 60.0, std::span<const double> weights = {});
std::vector<FusedCandidate> linear_fusion(std::span<const std::vector<store::ScoredChunk>> lists,
                                          std::span<const double> weights = {}, std::size_t range_depth = 50,
                                          double agreement_bonus = 0.0);

}  // namespace kotae::search
