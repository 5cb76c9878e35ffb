#pragma once
// Hybrid retrieval over one collection, in three stages: retrieval (BM25 top-k and vector top-k, side
// by side), fusion (reciprocal rank fusion, deduplicated by chunk id, the hits' chunks and documents
// fetched), and an optional rerank (a cross-encoder reorders the best fused hits). Modes `bm25` and
// `vector` run one retriever alone. search() runs the stages in turn; a caller that must not wait on
// the reranker's model (the server) runs them apart.

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

enum class Fusion { rrf, linear };

struct SearchOptions {
  SearchMode mode = SearchMode::hybrid;
  std::size_t k = 10;           // hits returned
  std::size_t candidates = 50;  // taken from each retriever before fusion (at least k)
  // How hybrid mode fuses the two lists (search/rank_fusion.h). Linear with BM25 at 0.25, a chunk both
  // lists find counting 1.3x, beat the best single mode on the Debian and Python FAQ sets in FP32 and
  // INT8 (by 0.011 to 0.032 nDCG@10); RRF lost to vector alone on both (docs/quality.md).
  Fusion fusion = Fusion::linear;
  double rrf_k = 60.0;
  double bm25_weight = 0.25, vector_weight = 1.0;  // each list's weight in the fusion
  std::size_t fusion_range = 50;  // linear fusion normalises over each list's best N, however deep it is
  double agreement_bonus = 0.3;   // linear fusion: x(1 + this) for a chunk both lists score above their floor
  store::SearchFilter filter;
  bool rerank = true;                  // when the retriever has a reranker
  std::size_t rerank_candidates = 30;  // fused candidates the reranker sees (at least k)
};

struct SearchHit {
  store::ChunkRecord chunk;
  std::string document_path;
  std::string document_title;
  std::string document_format;
  std::string document_metadata_json = "{}";  // the document's metadata as stored (a JSON object's text)
  double score = 0;                           // the ranking score: RRF, BM25, cosine, or the reranker's, by mode
  std::size_t bm25_rank = 0;                  // 1-based rank in each retriever's list, 0 when absent
  std::size_t vector_rank = 0;
  std::optional<float> rerank_score;
};

struct SearchTiming {  // milliseconds
  double embed = 0, bm25 = 0, vector = 0, fuse = 0, rerank = 0, fetch = 0, total = 0;
};

// A stage that failed and was passed over, as answers report their back-ends: {"rerank", why}.
struct StageFallback {
  std::string backend;
  std::string error;
};

struct SearchResult {
  std::vector<SearchHit> hits;
  SearchTiming timing;
  std::vector<StageFallback> fallbacks = {};  // the reranker failed: the hits keep their fused order
};

// Each retriever's candidates, best first: [bm25?, vector?].
struct RetrievedLists {
  std::vector<std::vector<store::ScoredChunk>> lists;
  bool bm25 = false, vector = false;
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

  // The stages. 1: each retriever's candidates.
  Result<RetrievedLists> retrieve(std::string_view query, std::span<const float> query_vector,
                                  const SearchOptions& options) const;
  // 2: one ranked list of hits, cut to what the rerank stage sees (or to k when there is none).
  Result<SearchResult> fuse(RetrievedLists retrieved, const SearchOptions& options) const;
  // 3: whether there is one, the passages it scores, and the hits reordered by their scores and cut to k.
  bool reranks(const SearchOptions& options) const { return reranker_ && options.rerank; }
  static std::vector<std::string> rerank_passages(const SearchResult& fused, const SearchOptions& options);
  static void rerank_by(SearchResult& fused, std::span<const float> scores, const SearchOptions& options);
  // 3, when the reranker failed: the fused order cut to k, and the failure noted in `fallbacks`. A
  // search goes on without its rerank stage rather than failing.
  static void skip_rerank(SearchResult& fused, const Error& error, const SearchOptions& options);

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
