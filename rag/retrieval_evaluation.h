#pragma once
// `kotae eval`: indexes a BEIR dataset's corpus into a collection (each corpus entry is one
// document, chunked like any file) and measures document-level retrieval quality for each search
// mode (search/retrieval_metrics.h).

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/encoder.h"
#include "rag/beir_dataset.h"
#include "rag/ingester.h"
#include "search/hybrid_retriever.h"

namespace kotae::rag {

// Indexes every corpus entry that has text, as document `_id` (title + "\n\n" + text, normalised as
// plain text). Unchanged entries are skipped, so a second run is fast. Returns what was done.
Result<IngestSummary> index_beir_corpus(
    Ingester& ingester, const BeirDataset& dataset,
    const std::function<void(std::size_t done, std::size_t total)>& on_progress = {});

struct ModeEvaluation {
  search::SearchMode mode = search::SearchMode::hybrid;
  bool reranked = false;
  search::RetrievalMetrics metrics;
  double retrieve_p50_ms = 0, retrieve_p99_ms = 0;  // retrieval alone, the query already embedded
};

struct EvaluationOptions {
  std::vector<search::SearchMode> modes{search::SearchMode::bm25, search::SearchMode::vector,
                                        search::SearchMode::hybrid};
  search::SearchOptions search;   // mode and k are set per run; filter, rrf_k, rerank taken from here
  std::size_t chunk_depth = 300;  // chunks retrieved per query, enough for 100 distinct documents
  // Called with each query's ranked hits in each mode (`kotae eval --runs`), so a fusion can be
  // replayed offline from the legs' lists (bench/fusion_replay.py).
  std::function<void(search::SearchMode, const std::string& query_id, const std::vector<search::SearchHit>& hits)>
      on_ranking;
};

Result<std::vector<ModeEvaluation>> evaluate_retrieval(const search::HybridRetriever& retriever, const Encoder& encoder,
                                                       const BeirDataset& dataset, const EvaluationOptions& options);

}  // namespace kotae::rag
