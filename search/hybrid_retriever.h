#pragma once
// Hybrid retrieval over one collection: BM25 top-k and vector top-k run in parallel, are fused by
// reciprocal rank fusion and deduplicated by chunk id; an optional reranker (a cross-encoder) then
// reorders the best fused candidates. Modes `bm25` and `vector` run one retriever alone.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/encoder.h"
#include "model/reranker.h"
#include "search/search_mode.h"
#include "store/collection.h"

namespace kotae::search {

struct SearchOptions {
  SearchMode mode = SearchMode::hybrid;
  std::size_t k = 10;           // hits returned
  std::size_t candidates = 50;  // taken from each retriever before fusion (at least k)
  double rrf_k = 60.0;
  store::SearchFilter filter;
  bool rerank = true;                 // when the retriever has a reranker
  std::size_t rerank_candidates = 30; // fused candidates the reranker sees (at least k)
};

struct SearchHit {
  store::ChunkRecord chunk;
  std::string document_path;
  std::string document_title;
  std::string document_format;
  double score = 0;  // the ranking score: RRF, BM25, cosine, or the reranker's, by mode
  std::size_t bm25_rank = 0;    // 1-based rank in each retriever's list, 0 when absent
  std::size_t vector_rank = 0;
  std::optional<float> rerank_score;
};

struct SearchTiming {  // milliseconds
  double embed = 0, bm25 = 0, vector = 0, fuse = 0, rerank = 0, fetch = 0, total = 0;
};

struct SearchResult {
  std::vector<SearchHit> hits;
  SearchTiming timing;
};

class HybridRetriever {
 public:
  // The encoder must be the collection's embedder (checked: its id and dimension); it and the reranker
  // may be null for BM25-only use. All are borrowed and must outlive the retriever.
  static Result<HybridRetriever> create(const store::Collection& collection, const Encoder* encoder,
                                        const Reranker* reranker = nullptr);

  Result<SearchResult> search(std::string_view query, const SearchOptions& options) const;
  // With the query already embedded (by a batcher, or a benchmark that times retrieval alone).
  Result<SearchResult> search_embedded(std::string_view query, std::span<const float> query_vector,
                                       const SearchOptions& options) const;

 private:
  HybridRetriever(const store::Collection& collection, const Encoder* encoder, const Reranker* reranker)
      : collection_(&collection), encoder_(encoder), reranker_(reranker) {}
  Result<SearchResult> run(std::string_view query, std::span<const float> query_vector, const SearchOptions& options,
                           double embed_ms) const;

  const store::Collection* collection_;
  const Encoder* encoder_;
  const Reranker* reranker_;
};

}  // namespace kotae::search
