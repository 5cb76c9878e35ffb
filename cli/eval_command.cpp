#include "cli/eval_command.h"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/collection_access.h"
#include "cli/progress_bar.h"
#include "core/paths.h"
#include "core/sha256.h"
#include "rag/retrieval_evaluation.h"

namespace kotae::cli {

int run_eval(const EvalOptions& options) {
  rag::IngestOptions ingest;
  if (options.chunk_tokens) ingest.chunking.max_tokens = options.chunk_tokens;
  if (options.overlap_given) ingest.chunking.overlap_tokens = options.overlap_tokens;
  const std::string model = options.model.empty() ? kDefaultEmbeddingModel : options.model;

  rag::EvaluationOptions evaluation;
  evaluation.modes.clear();
  for (const auto& name : options.modes) {
    auto mode = search::parse_search_mode(name);
    if (!mode) return report_error(make_error(ErrorCode::invalid_argument, "unknown mode '" + name + "' (bm25, vector, hybrid)"));
    evaluation.modes.push_back(*mode);
  }
  evaluation.search.rrf_k = options.rrf_k;
  evaluation.search.fusion = options.fusion == "linear" ? search::Fusion::linear : search::Fusion::rrf;
  evaluation.search.bm25_weight = options.bm25_weight;
  evaluation.search.vector_weight = options.vector_weight;
  evaluation.search.candidates = options.candidates;
  evaluation.chunk_depth = options.candidates;

  auto dataset = rag::load_beir_dataset(options.dataset);
  if (!dataset) return report_error(dataset.error());

  // One collection per dataset, model and chunking, kept between runs: a second eval reuses it.
  std::string collection = options.collection;
  if (collection.empty()) {
    const auto key = std::filesystem::absolute(options.dataset).lexically_normal().string() + "|" + model + "|" +
                     std::to_string(ingest.chunking.max_tokens) + "|" + std::to_string(ingest.chunking.overlap_tokens);
    collection = "eval-" + options.dataset.filename().string() + "-" + sha256_hex(key).substr(0, 12);
  }
  auto open = open_for_indexing(options.where, collection, model, ingest.chunking.max_tokens,
                                ingest.chunking.overlap_tokens, std::chrono::seconds(60));
  if (!open) return report_error(open.error());
  auto reranker = load_reranker(options.where.data_dir, options.rerank_model);
  if (!reranker) return report_error(reranker.error());

  rag::Ingester ingester(*open->collection, *open->encoder, ingest);
  ProgressBar bar;
  auto indexed = rag::index_beir_corpus(ingester, *dataset, [&](std::size_t done, std::size_t total) {
    bar.update(done, total, open->collection->chunk_count(), done, total, 0, done == total);
  });
  bar.finish();
  if (!indexed) return report_error(indexed.error());
  if (auto saved = open->collection->save_vector_index(); !saved) return report_error(saved.error());

  auto retriever = search::HybridRetriever::create(*open->collection, open->encoder.get(), reranker->get());
  if (!retriever) return report_error(retriever.error());
  auto results = rag::evaluate_retrieval(*retriever, *open->encoder, *dataset, evaluation);
  if (!results) return report_error(results.error());

  for (const auto& r : *results) {
    const std::string mode = std::string(search::to_string(r.mode)) + (r.reranked ? "+rerank" : "");
    if (options.json) {
      std::cout << nlohmann::json{{"mode", mode},
                                  {"mrr@10", r.metrics.mrr_at_10},
                                  {"ndcg@10", r.metrics.ndcg_at_10},
                                  {"recall@10", r.metrics.recall_at_10},
                                  {"recall@100", r.metrics.recall_at_100},
                                  {"queries", r.metrics.queries},
                                  {"documents", open->collection->document_count()},
                                  {"chunks", open->collection->chunk_count()},
                                  {"collection", collection},
                                  {"embedder", open->collection->info().embedder_id},
                                  {"chunk_tokens", ingest.chunking.max_tokens},
                                  {"overlap_tokens", ingest.chunking.overlap_tokens},
                                  {"fusion", options.fusion},
                                  {"bm25_weight", options.bm25_weight},
                                  {"vector_weight", options.vector_weight},
                                  {"retrieve_p50_ms", r.retrieve_p50_ms},
                                  {"retrieve_p99_ms", r.retrieve_p99_ms}}
                       .dump()
                << "\n";
    } else {
      std::printf("%-14s MRR@10 %.3f  nDCG@10 %.3f  R@10 %.3f  R@100 %.3f  (%zu queries; retrieval p50 %.2f ms)\n",
                  mode.c_str(), r.metrics.mrr_at_10, r.metrics.ndcg_at_10, r.metrics.recall_at_10,
                  r.metrics.recall_at_100, r.metrics.queries, r.retrieve_p50_ms);
    }
  }
  return 0;
}

}  // namespace kotae::cli
