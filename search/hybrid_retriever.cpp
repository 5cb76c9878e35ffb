#include "search/hybrid_retriever.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>

#include "search/rank_fusion.h"
#include "search/second_leg.h"

namespace kotae::search {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Runs `work` and records how long it took.
template <class F>
auto timed(double& elapsed_ms, F&& work) {
  const auto start = Clock::now();
  auto result = work();
  elapsed_ms = ms_since(start);
  return result;
}

}  // namespace

Result<HybridRetriever> HybridRetriever::create(const store::Collection& collection, const Encoder* encoder,
                                                const Reranker* reranker) {
  if (encoder) {
    const auto& info = collection.info();
    if (encoder->id() != info.embedder_id || encoder->dimension() != info.dimension)
      return make_error(ErrorCode::invalid_argument, collection.location() + " was built with " + info.embedder_id +
                                                         " (" + std::to_string(info.dimension) + " dimensions), not " +
                                                         encoder->id() + " (" + std::to_string(encoder->dimension()) +
                                                         ")");
  }
  return HybridRetriever(collection, encoder, reranker);
}

Result<SearchResult> HybridRetriever::search(std::string_view query, const SearchOptions& options) const {
  std::vector<float> query_vector;
  double embed_ms = 0;
  if (options.mode != SearchMode::bm25) {
    if (!encoder_)
      return make_error(ErrorCode::invalid_argument,
                        std::string(to_string(options.mode)) + " search needs the collection's embedding model");
    const auto start = Clock::now();
    const std::string text(query);
    auto embedded = encoder_->embed(std::span<const std::string>(&text, 1), TextRole::query);
    if (!embedded) return embedded.error();
    query_vector = embedded->row_copy(0);
    embed_ms = ms_since(start);
  }
  return run(query, query_vector, options, embed_ms);
}

Result<SearchResult> HybridRetriever::search_embedded(std::string_view query, std::span<const float> query_vector,
                                                      const SearchOptions& options) const {
  if (options.mode != SearchMode::bm25 && query_vector.size() != collection_->info().dimension)
    return make_error(ErrorCode::invalid_argument, "query vector has " + std::to_string(query_vector.size()) +
                                                       " dimensions; the collection has " +
                                                       std::to_string(collection_->info().dimension));
  return run(query, query_vector, options, 0);
}

Result<SearchResult> HybridRetriever::run(std::string_view query, std::span<const float> query_vector,
                                          const SearchOptions& options, double embed_ms) const {
  if (options.k == 0) return SearchResult{};
  const auto start = Clock::now();
  auto retrieved = KOTAE_TRY_VALUE(retrieve(query, query_vector, options));
  auto result = KOTAE_TRY_VALUE(fuse(std::move(retrieved), options));
  if (reranks(options)) {
    const auto rerank_start = Clock::now();
    const auto scores = KOTAE_TRY_VALUE(reranker_->score(query, rerank_passages(result, options)));
    rerank_by(result, scores, options);
    result.timing.rerank = ms_since(rerank_start);
  }
  result.timing.embed = embed_ms;
  result.timing.total = embed_ms + ms_since(start);
  return result;
}

Result<RetrievedLists> HybridRetriever::retrieve(std::string_view query, std::span<const float> query_vector,
                                                 const SearchOptions& options) const {
  RetrievedLists out;
  out.bm25 = options.mode != SearchMode::vector;
  out.vector = options.mode != SearchMode::bm25;
  const std::size_t depth = std::max({options.candidates, options.k, reranks(options) ? options.rerank_candidates : 0});

  // BM25 beside the vector search, on a pool thread when one is free (search/second_leg.h): no thread
  // is started per query, and a loaded machine runs both legs on this one.
  double bm25_ms = 0;
  std::optional<Result<std::vector<store::ScoredChunk>>> bm25;
  auto search_bm25 = [&] {
    bm25 = timed(bm25_ms, [&] { return collection_->search_bm25(query, depth, options.filter); });
  };
  std::optional<SecondLeg> beside;
  if (out.bm25 && out.vector) beside.emplace(search_bm25);
  if (out.vector) {
    auto hits =
        timed(out.timing.vector, [&] { return collection_->search_vector(query_vector, depth, options.filter); });
    if (beside) beside->join();
    if (!hits) return hits.error();
    out.lists.push_back(std::move(*hits));
  }
  if (out.bm25) {
    if (!beside) search_bm25();
    if (!*bm25) return bm25->error();
    out.lists.insert(out.lists.begin(), std::move(**bm25));
  }
  out.timing.bm25 = bm25_ms;
  return out;
}

Result<SearchResult> HybridRetriever::fuse(RetrievedLists retrieved, const SearchOptions& options) const {
  SearchResult result;
  result.timing = retrieved.timing;
  auto& lists = retrieved.lists;
  // One list passes through with its own scores; two are fused.
  auto fuse_start = Clock::now();
  std::vector<FusedCandidate> candidates;
  if (lists.size() == 1) {
    for (std::size_t i = 0; i < lists[0].size(); ++i)
      candidates.push_back({lists[0][i].chunk_id, lists[0][i].document_id, lists[0][i].score, {i + 1}});
  } else if (lists.size() == 2) {
    const double weights[] = {options.bm25_weight, options.vector_weight};
    candidates = options.fusion == Fusion::linear
                     ? linear_fusion(lists, weights, options.fusion_range, options.agreement_bonus)
                     : reciprocal_rank_fusion(lists, options.rrf_k, weights);
  }
  result.timing.fuse = ms_since(fuse_start);
  candidates.resize(
      std::min(candidates.size(), reranks(options) ? std::max(options.k, options.rerank_candidates) : options.k));

  auto fetch_start = Clock::now();
  std::vector<std::int64_t> chunk_ids, document_ids;
  for (const auto& c : candidates) {
    chunk_ids.push_back(c.chunk_id);
    document_ids.push_back(c.document_id);
  }
  auto chunks = KOTAE_TRY_VALUE(collection_->chunks(chunk_ids));
  auto documents = KOTAE_TRY_VALUE(collection_->documents(document_ids));
  result.timing.fetch = ms_since(fetch_start);

  // A chunk removed by a writer since the search named it is left out.
  std::size_t next_chunk = 0;
  for (std::size_t i = 0; i < candidates.size() && next_chunk < chunks.size(); ++i) {
    if (chunks[next_chunk].id != candidates[i].chunk_id) continue;
    SearchHit hit;
    hit.chunk = std::move(chunks[next_chunk++]);
    hit.document_path = documents[i].path;
    hit.document_title = documents[i].title;
    hit.document_format = documents[i].format;
    hit.document_metadata_json = documents[i].metadata_json;
    hit.score = candidates[i].score;
    const auto& ranks = candidates[i].ranks;
    hit.bm25_rank = retrieved.bm25 ? ranks[0] : 0;
    hit.vector_rank = retrieved.vector ? ranks.back() : 0;
    result.hits.push_back(std::move(hit));
  }
  if (!reranks(options) && result.hits.size() > options.k) result.hits.resize(options.k);
  return result;
}

std::vector<std::string> HybridRetriever::rerank_passages(const SearchResult& fused, const SearchOptions& options) {
  const std::size_t reranked = std::min(fused.hits.size(), std::max<std::size_t>(options.rerank_candidates, 1));
  std::vector<std::string> passages;
  for (std::size_t i = 0; i < reranked; ++i) passages.push_back(fused.hits[i].chunk.text);
  return passages;
}

// The reranker reorders the best fused candidates; deeper ones keep their fused order after them.
void HybridRetriever::rerank_by(SearchResult& fused, std::span<const float> scores, const SearchOptions& options) {
  const std::size_t reranked = std::min(scores.size(), fused.hits.size());
  for (std::size_t i = 0; i < reranked; ++i) {
    fused.hits[i].rerank_score = scores[i];
    fused.hits[i].score = scores[i];
  }
  // Stable: equal reranker scores keep the fused order.
  std::stable_sort(fused.hits.begin(), fused.hits.begin() + static_cast<std::ptrdiff_t>(reranked),
                   [](const SearchHit& a, const SearchHit& b) { return *a.rerank_score > *b.rerank_score; });
  if (fused.hits.size() > options.k) fused.hits.resize(options.k);
}

void HybridRetriever::skip_rerank(SearchResult& fused, const Error& error, const SearchOptions& options) {
  if (fused.hits.size() > options.k) fused.hits.resize(options.k);
  StageFallback fallback;
  fallback.backend = "rerank";
  fallback.error = error.message;
  fused.fallbacks.push_back(std::move(fallback));
}

}  // namespace kotae::search
