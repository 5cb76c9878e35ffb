#include "cli/eval_command.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "assembly/collection_access.h"
#include "cli/progress_bar.h"
#include "cli/report_error.h"
#include "core/paths.h"
#include "core/sha256.h"
#include "rag/retrieval_evaluation.h"

namespace kotae::cli {

namespace {

struct ModelRun {
  std::string model;
  std::string collection;
  std::string embedder_id;
  std::string precision;  // what the model ran in (KOTAE_PRECISION and the CPU choose)
  std::size_t documents = 0, chunks = 0;
  double encode_per_s = 0;  // corpus passages embedded per second
  std::vector<rag::ModeEvaluation> results;
};

// Passages per second over the first 256 of the corpus, in batches of 32: the model's own speed
// here, whether or not its collection was already indexed.
Result<double> encode_speed(const Encoder& encoder, const rag::BeirDataset& dataset) {
  std::vector<std::string> texts;
  for (const auto& d : dataset.corpus) {
    if (texts.size() == 256) break;
    texts.push_back(d.title.empty() ? d.text : d.title + "\n" + d.text);
  }
  if (texts.empty()) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t at = 0; at < texts.size(); at += 32) {
    const std::span<const std::string> batch(texts.data() + at, std::min<std::size_t>(32, texts.size() - at));
    KOTAE_TRY(encoder.embed(batch, TextRole::passage));
  }
  return double(texts.size()) / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `--runs`: each query's ranked chunks as a JSON line; hybrid lines also carry the fusion setting, which
// bench/fusion_replay.py must reproduce.
auto ranking_writer(const std::string& model, const std::string& precision, const search::SearchOptions& options,
                    std::ostream& out) {
  nlohmann::json fusion{{"fusion", options.fusion == search::Fusion::linear ? "linear" : "rrf"},
                        {"bm25_weight", options.bm25_weight},
                        {"vector_weight", options.vector_weight},
                        {"agreement_bonus", options.agreement_bonus},
                        {"range", options.fusion_range},
                        {"rrf_k", options.rrf_k}};
  return [=, &out](search::SearchMode mode, const std::string& query, const std::vector<search::SearchHit>& hits) {
    nlohmann::json ranked = nlohmann::json::array();
    for (const auto& hit : hits)
      ranked.push_back({{"chunk", hit.chunk.id}, {"document", hit.document_path}, {"score", hit.score}});
    nlohmann::json row{{"model", model},
                       {"precision", precision},
                       {"mode", std::string(search::to_string(mode))},
                       {"query", query},
                       {"hits", std::move(ranked)}};
    if (mode == search::SearchMode::hybrid) row["fusion"] = fusion;
    out << row.dump() << "\n";
  };
}

Result<ModelRun> evaluate_model(const EvalOptions& options, const std::string& model,
                                std::optional<EncoderOptions::Precision> asked, const rag::BeirDataset& dataset,
                                rag::EvaluationOptions evaluation, const rag::IngestOptions& ingest,
                                std::ostream* runs) {
  // One collection per dataset, model, precision and chunking, kept between runs: a second eval reuses it.
  ModelRun run;
  run.model = model;
  run.collection = options.collection;
  const auto precision = asked ? *asked : KOTAE_TRY_VALUE(assembly::best_precision(options.where.data_dir, model));
  if (run.collection.empty() || options.models.size() > 1 || options.precisions.size() > 1) {
    // Vectors of one precision are not mixed with another's queries: each has its collection.
    const auto key = std::filesystem::absolute(options.dataset).lexically_normal().string() + "|" + model + "|" +
                     std::to_string(ingest.chunking.max_tokens) + "|" + std::to_string(ingest.chunking.overlap_tokens) +
                     (precision == EncoderOptions::Precision::int8 ? "|int8" : "");
    run.collection = (options.collection.empty() ? "eval-" + options.dataset.filename().string() : options.collection) +
                     "-" + sha256_hex(key).substr(0, 12);
  }
  auto open =
      KOTAE_TRY_VALUE(assembly::open_for_indexing(options.where, run.collection, model, ingest.chunking.max_tokens,
                                                  ingest.chunking.overlap_tokens, std::chrono::seconds(60), asked));
  auto reranker = KOTAE_TRY_VALUE(assembly::load_reranker(options.where.data_dir, options.rerank_model));

  rag::Ingester ingester(*open.collection, *open.encoder, ingest);
  ProgressBar bar;
  KOTAE_TRY(rag::index_beir_corpus(ingester, dataset, [&](std::size_t done, std::size_t total) {
    bar.update(done, total, open.collection->chunk_count(), done, total, 0, done == total);
  }));
  bar.finish();
  KOTAE_TRY(open.collection->save_vector_index());

  auto retriever =
      KOTAE_TRY_VALUE(search::HybridRetriever::create(*open.collection, open.encoder.get(), reranker.get()));
  if (runs) evaluation.on_ranking = ranking_writer(model, open.encoder->precision(), evaluation.search, *runs);
  run.results = KOTAE_TRY_VALUE(rag::evaluate_retrieval(retriever, *open.encoder, dataset, evaluation));
  run.encode_per_s = KOTAE_TRY_VALUE(encode_speed(*open.encoder, dataset));
  run.embedder_id = open.collection->info().embedder_id;
  run.precision = open.encoder->precision();
  run.documents = open.collection->document_count();
  run.chunks = open.collection->chunk_count();
  return run;
}

}  // namespace

int run_eval(const EvalOptions& options) {
  rag::IngestOptions ingest;
  if (options.chunk_tokens) ingest.chunking.max_tokens = options.chunk_tokens;
  if (options.overlap_given) ingest.chunking.overlap_tokens = options.overlap_tokens;
  const std::vector<std::string> models =
      options.models.empty() ? std::vector<std::string>{kDefaultEmbeddingModel} : options.models;

  rag::EvaluationOptions evaluation;
  evaluation.modes.clear();
  for (const auto& name : options.modes) {
    auto mode = search::parse_search_mode(name);
    if (!mode)
      return report_error(
          make_error(ErrorCode::invalid_argument, "unknown mode '" + name + "' (bm25, vector, hybrid)"));
    evaluation.modes.push_back(*mode);
  }
  evaluation.search.rrf_k = options.rrf_k;
  evaluation.search.fusion = options.fusion == "linear" ? search::Fusion::linear : search::Fusion::rrf;
  evaluation.search.bm25_weight = options.bm25_weight;
  evaluation.search.vector_weight = options.vector_weight;
  evaluation.search.agreement_bonus = options.agreement_bonus;
  evaluation.search.candidates = options.candidates;
  evaluation.chunk_depth = options.candidates;

  auto dataset = rag::load_beir_dataset(options.dataset);
  if (!dataset) return report_error(dataset.error());

  std::vector<std::optional<EncoderOptions::Precision>> precisions;
  for (const auto& name : options.precisions) {
    if (name != "fp32" && name != "int8") {
      return report_error(make_error(ErrorCode::invalid_argument, "unknown precision '" + name + "' (fp32, int8)"));
    }
    precisions.push_back(name == "int8" ? EncoderOptions::Precision::int8 : EncoderOptions::Precision::fp32);
  }
  if (precisions.empty()) precisions.push_back(std::nullopt);

  std::ofstream rankings;
  if (!options.runs.empty()) {
    rankings.open(options.runs);
    if (!rankings) return report_error(make_error(ErrorCode::io, "cannot write " + options.runs.string()));
  }
  std::vector<ModelRun> runs;
  for (const auto& model : models) {
    for (const auto& precision : precisions) {
      auto run = evaluate_model(options, model, precision, *dataset, evaluation, ingest,
                                rankings.is_open() ? &rankings : nullptr);
      if (!run) return report_error(run.error());
      runs.push_back(std::move(*run));
    }
  }

  if (!options.json) {
    std::printf("%-24s %-5s %-14s %7s %7s %7s %7s %9s %12s\n", "model", "prec", "mode", "nDCG@10", "MRR@10", "R@10",
                "R@100", "encode/s", "retrieve p50");
  }
  // The same model in FP32 in this eval, if it ran: what another precision costs and gains.
  auto fp32_of = [&](const ModelRun& run) -> const ModelRun* {
    for (const auto& other : runs) {
      if (other.model == run.model && other.precision == "fp32" && run.precision != "fp32") return &other;
    }
    return nullptr;
  };
  for (const auto& run : runs) {
    const ModelRun* fp32 = fp32_of(run);
    for (std::size_t m = 0; m < run.results.size(); ++m) {
      const auto& r = run.results[m];
      const std::string mode = std::string(search::to_string(r.mode)) + (r.reranked ? "+rerank" : "");
      if (options.json) {
        nlohmann::json row{{"model", run.model},
                           {"mode", mode},
                           {"mrr@10", r.metrics.mrr_at_10},
                           {"ndcg@10", r.metrics.ndcg_at_10},
                           {"recall@10", r.metrics.recall_at_10},
                           {"recall@100", r.metrics.recall_at_100},
                           {"queries", r.metrics.queries},
                           {"documents", run.documents},
                           {"chunks", run.chunks},
                           {"collection", run.collection},
                           {"embedder", run.embedder_id},
                           {"precision", run.precision},
                           {"encode_passages_per_s", run.encode_per_s},
                           {"chunk_tokens", ingest.chunking.max_tokens},
                           {"overlap_tokens", ingest.chunking.overlap_tokens},
                           {"fusion", options.fusion},
                           {"bm25_weight", options.bm25_weight},
                           {"vector_weight", options.vector_weight},
                           {"agreement_bonus", options.agreement_bonus},
                           {"retrieve_p50_ms", r.retrieve_p50_ms},
                           {"retrieve_p99_ms", r.retrieve_p99_ms}};
        if (fp32) {
          row["ndcg@10_loss_vs_fp32"] = 1 - r.metrics.ndcg_at_10 / fp32->results[m].metrics.ndcg_at_10;
          row["encode_vs_fp32"] = run.encode_per_s / fp32->encode_per_s;
        }
        std::cout << row.dump() << "\n";
      } else {
        std::printf("%-24s %-5s %-14s %7.3f %7.3f %7.3f %7.3f %9.1f %9.2f ms\n", run.model.c_str(),
                    run.precision.c_str(), mode.c_str(), r.metrics.ndcg_at_10, r.metrics.mrr_at_10,
                    r.metrics.recall_at_10, r.metrics.recall_at_100, run.encode_per_s, r.retrieve_p50_ms);
        if (fp32) {
          std::printf("%-24s %-5s %-14s nDCG@10 %+.2f%% against fp32, encode %.2fx\n", "", run.precision.c_str(),
                      mode.c_str(), -100 * (1 - r.metrics.ndcg_at_10 / fp32->results[m].metrics.ndcg_at_10),
                      run.encode_per_s / fp32->encode_per_s);
        }
      }
    }
  }
  if (rankings.is_open() && !rankings.flush())
    return report_error(make_error(ErrorCode::io, "cannot write " + options.runs.string()));
  return 0;
}

}  // namespace kotae::cli
