// Retrieval latency and vector-index recall at a given collection size. Real chunks and their real
// embeddings come from a collection built by `kotae index` (bench/retrieval builds it from
// debian-reference); larger sizes are grown from it by bench/sized_collection.h.
// Queries are real questions (a BEIR queries.jsonl), embedded once: the latencies are retrieval alone.
// Prints one JSON object per (size, mode) and one per size for recall@10 against exact search.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/latency_stats.h"
#include "bench/sized_collection.h"
#include "model/sentence_encoder.h"
#include "search/hybrid_retriever.h"
#include "store/collection.h"

namespace {

using namespace kotae;
using bench::percentile;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& message) {
  std::cerr << "kotae-bench-search: " << message << "\n";
  std::exit(2);
}

template <class T>
T check(Result<T> result, const char* what) {
  if (!result) die(std::string(what) + ": " + result.error().message);
  return std::move(*result);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"retrieval latency and vector recall at 10k/100k chunks"};
  fs::path source_dir, model_dir, queries_file, work_dir;
  std::vector<std::size_t> sizes{10000, 100000};
  int repeat = 3;
  std::vector<std::string> mode_names{"bm25", "vector", "hybrid"};
  app.add_option("--source", source_dir, "collection with real chunks and embeddings")->required();
  app.add_option("--model-dir", model_dir, "the collection's embedding model folder")->required();
  app.add_option("--queries", queries_file, "BEIR queries.jsonl")->required();
  app.add_option("--work", work_dir, "where to build the sized collections")->required();
  app.add_option("--sizes", sizes, "chunk counts")->delimiter(',');
  app.add_option("--repeat", repeat, "passes over the queries per mode");
  app.add_option("--modes", mode_names, "modes to time")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  auto source = check(store::Collection::open(source_dir), "source collection");
  if (source->chunk_count() == 0) die("the source collection has no chunks");
  const store::CollectionInfo info = source->info();

  auto encoder = check(SentenceEncoder::load(model_dir), "model");
  if (encoder->id() != info.embedder_id)
    die("model " + encoder->id() + " did not build the source (" + info.embedder_id + ")");
  std::vector<std::string> queries;
  {
    std::ifstream in(queries_file);
    for (std::string line; std::getline(in, line);)
      if (auto q = nlohmann::json::parse(line, nullptr, false); q.is_object()) queries.push_back(q.value("text", ""));
  }
  if (queries.empty()) die("no queries in " + queries_file.string());
  const auto query_vectors = check(encoder->embed(queries, kotae::TextRole::query), "embedding queries");
  std::vector<double> embed_ms;
  for (std::size_t i = 0; i < std::min<std::size_t>(queries.size(), 100); ++i) {
    const auto start = Clock::now();
    (void)check(encoder->embed(std::span<const std::string>(&queries[i], 1), kotae::TextRole::query),
                "embedding a query");
    embed_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::cout << nlohmann::json{{"name", "query_embedding"},
                              {"model", encoder->id()},
                              {"queries", embed_ms.size()},
                              {"p50_ms", percentile(embed_ms, 50)},
                              {"p99_ms", percentile(embed_ms, 99)}}
                   .dump()
            << std::endl;

  for (const std::size_t size : sizes) {
    const fs::path dir = work_dir / ("search-" + std::to_string(size));
    const auto build_start = Clock::now();
    auto collection = check(bench::grow_collection(*source, dir, size), "growing the collection");
    const double build_s = std::chrono::duration<double>(Clock::now() - build_start).count();
    const std::size_t chunks = collection->chunk_count();

    auto retriever = check(search::HybridRetriever::create(*collection, encoder.get()), "retriever");
    for (const auto& mode_name : mode_names) {
      const auto parsed = search::parse_search_mode(mode_name);
      if (!parsed) die("unknown mode " + mode_name);
      const auto mode = *parsed;
      search::SearchOptions options;
      options.mode = mode;
      options.k = 10;
      std::vector<double> total_ms;
      search::SearchTiming sum;                     // per stage, for the mean
      for (int pass = -1; pass < repeat; ++pass) {  // pass -1 warms caches
        for (std::size_t q = 0; q < queries.size(); ++q) {
          auto result = check(retriever.search_embedded(queries[q], query_vectors.row(q), options), "search");
          if (pass < 0) continue;
          total_ms.push_back(result.timing.total);
          sum.bm25 += result.timing.bm25;
          sum.vector += result.timing.vector;
          sum.fuse += result.timing.fuse;
          sum.fetch += result.timing.fetch;
        }
      }
      const double n = double(total_ms.size());
      std::cout << nlohmann::json{{"name", "retrieval_latency"},
                                  {"mode", search::to_string(mode)},
                                  {"chunks", chunks},
                                  {"queries", total_ms.size()},
                                  {"k", options.k},
                                  {"candidates", options.candidates},
                                  {"p50_ms", percentile(total_ms, 50)},
                                  {"p95_ms", percentile(total_ms, 95)},
                                  {"p99_ms", percentile(total_ms, 99)},
                                  {"mean_stage_ms",
                                   {{"bm25", sum.bm25 / n},
                                    {"vector", sum.vector / n},
                                    {"fuse", sum.fuse / n},
                                    {"fetch", sum.fetch / n}}}}
                       .dump()
                << std::endl;
    }

    double recall = 0;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      auto approximate = check(collection->search_vector(query_vectors.row(q), 10), "vector search");
      auto exact = check(collection->search_vector_exact(query_vectors.row(q), 10), "exact search");
      std::size_t found = 0;
      for (const auto& e : exact)
        found += std::any_of(approximate.begin(), approximate.end(),
                             [&](const auto& a) { return a.chunk_id == e.chunk_id; });
      recall += exact.empty() ? 1.0 : double(found) / double(exact.size());
    }
    std::cout << nlohmann::json{{"name", "vector_recall_at_10"},
                                {"chunks", chunks},
                                {"queries", queries.size()},
                                {"recall_at_10", recall / double(queries.size())},
                                {"build_s", build_s},
                                {"store_chunks_per_s", double(chunks) / build_s},
                                {"source_chunks", source->chunk_count()}}
                     .dump()
              << std::endl;
    collection.reset();
    fs::remove_all(dir);
  }
  return 0;
}
