// Kotae's side of bench/embed: reads the shared inputs file and prints one JSON line per case, in the
// same schema as the peers in bench/peers (see bench/README.md). The orchestrator compares them.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "batch/encoder_batcher.h"
#include "bench/latency_stats.h"
#include "model/cross_encoder.h"
#include "model/sentence_encoder.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

using kotae::bench::latency;

void emit(const json& line) {
  std::cout << line.dump() << std::endl;
}

template <class Fn>
std::vector<double> time_runs(int warmup, int runs, Fn&& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  ms.reserve(runs);
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    fn();
    ms.push_back(ms_since(start));
  }
  return ms;
}

void fail(const kotae::Error& e) {
  std::fprintf(stderr, "kotae-bench-embed: %s\n", e.message.c_str());
  std::exit(2);
}

// N callers in a closed loop through the batcher for `seconds`.
json concurrency(kotae::batch::EncoderBatcher& batcher, const std::vector<std::string>& queries, int callers,
                 double seconds) {
  std::vector<std::vector<double>> latencies(callers);
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      for (std::size_t i = c; !stop.load(std::memory_order_relaxed); i += callers) {
        const auto t0 = Clock::now();
        if (!batcher.embed(queries[i % queries.size()], kotae::TextRole::query).get().ok()) ++errors;
        latencies[c].push_back(ms_since(t0));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double wall = ms_since(start) / 1000.0;
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  json line = latency({{"case", "concurrency"}, {"callers", callers}}, all);
  line["throughput_per_s"] = static_cast<double>(all.size()) / wall;
  line["errors"] = errors.load();
  return line;
}

struct BatchSizes : kotae::batch::BatchObserver {
  std::atomic<std::size_t> batches{0}, items{0};
  void on_batch(const kotae::batch::BatchRecord& r) override {
    ++batches;
    items += r.items;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kotae embedding benchmark (one side of bench/embed)"};
  std::string inputs_path;
  // int8: the dynamically quantised model (what the peers run); int8-static: the default model's
  // static INT8 variant (calibrated ranges, fused graph), what Kotae runs on CPUs with VNNI.
  std::vector<std::string> precisions = {"fp32", "int8", "int8-static"};
  std::vector<std::string> cases = {"single", "bulk", "concurrency", "rerank"};
  double seconds = 5;
  app.add_option("--inputs", inputs_path, "inputs JSON written by bench/embed")->required();
  app.add_option("--precision", precisions, "fp32, int8 and/or int8-static");
  app.add_option("--cases", cases, "single, bulk, concurrency, rerank");
  app.add_option("--seconds", seconds, "duration of each concurrency level");
  CLI11_PARSE(app, argc, argv);
  auto has = [&](const std::string& c) { return std::find(cases.begin(), cases.end(), c) != cases.end(); };

  std::ifstream in(inputs_path);
  const json inputs = json::parse(in);
  const json& settings = inputs["settings"];
  const int threads = settings.value("threads", 0);
  const int warmup = settings.value("warmup", 10);
  const std::string version = KOTAE_VERSION;

  std::map<std::string, kotae::Embeddings> bulk_vectors;  // per precision, to compare with fp32's
  for (const auto& precision : precisions) {
    kotae::EncoderOptions options;
    options.session.intra_op_threads = threads;
    const bool static_int8 = precision == "int8-static";
    if (static_int8) options.precision = kotae::EncoderOptions::Precision::int8;
    auto loaded =
        kotae::SentenceEncoder::load(inputs["models"][static_int8 ? "fp32" : precision].get<std::string>(), options);
    if (!loaded) fail(loaded.error());
    std::shared_ptr<const kotae::SentenceEncoder> encoder = std::move(*loaded);
    const json base = {{"impl", "kotae"}, {"precision", precision}, {"version", version}, {"threads", threads}};

    if (has("single")) {
      const std::string query = inputs["query"];
      auto ms = time_runs(warmup, settings.value("single_runs", 200), [&] {
        if (auto v = encoder->embed(std::span(&query, 1), kotae::TextRole::query); !v) fail(v.error());
      });
      json line = latency(base, ms);
      line["case"] = "single_query";
      emit(line);
    }
    if (has("bulk")) {
      const auto chunks = inputs["chunks"].get<std::vector<std::string>>();
      std::size_t tokens = 0;
      const auto start = Clock::now();
      std::vector<kotae::text::Encoding> encoded;
      encoded.reserve(chunks.size());
      for (const auto& c : chunks) {
        encoded.push_back(encoder->tokenize_as(kotae::TextRole::passage, c));
        tokens += encoded.back().size();
      }
      auto vectors = encoder->embed_encoded(encoded);
      if (!vectors) fail(vectors.error());
      const double s = ms_since(start) / 1000.0;
      bulk_vectors[precision] = std::move(*vectors);
      json line = base;
      line.update({{"case", "bulk"},
                   {"chunks", chunks.size()},
                   {"tokens", tokens},
                   {"seconds", s},
                   {"chunks_per_s", chunks.size() / s},
                   {"tokens_per_s", tokens / s}});
      emit(line);
    }
    if (has("concurrency")) {
      const auto queries = inputs["queries"].get<std::vector<std::string>>();
      for (int callers : {1, 8, 32}) {
        auto sizes = std::make_shared<BatchSizes>();
        kotae::batch::EncoderBatcher batcher(encoder);
        batcher.set_observer(sizes);
        json line = concurrency(batcher, queries, callers, seconds);
        line.update(base);
        line["window_ms"] = 2;
        line["mean_batch"] = sizes->batches ? double(sizes->items) / double(sizes->batches) : 0.0;
        emit(line);
      }
    }
  }

  // How far each precision's vectors are from FP32's, chunk by chunk.
  if (bulk_vectors.contains("fp32")) {
    const auto& reference = bulk_vectors["fp32"];
    for (const auto& [precision, vectors] : bulk_vectors) {
      if (precision == "fp32") continue;
      std::vector<double> cosines;
      for (std::size_t i = 0; i < vectors.size(); ++i) {
        double dot = 0;
        for (std::size_t d = 0; d < vectors.dimension; ++d) dot += double(vectors.row(i)[d]) * reference.row(i)[d];
        cosines.push_back(dot);
      }
      std::sort(cosines.begin(), cosines.end());
      double sum = 0;
      for (const double c : cosines) sum += c;
      emit({{"case", "fidelity"},
            {"impl", "kotae"},
            {"precision", precision},
            {"chunks", cosines.size()},
            {"min_cosine", cosines.front()},
            {"p01_cosine", cosines[cosines.size() / 100]},
            {"mean_cosine", sum / double(cosines.size())}});
    }
  }

  if (has("rerank") && inputs["models"].contains("cross_encoder") && !inputs["models"]["cross_encoder"].is_null()) {
    kotae::CrossEncoderOptions options;
    options.session.intra_op_threads = threads;
    auto reranker = kotae::CrossEncoder::load(inputs["models"]["cross_encoder"].get<std::string>(), options);
    if (!reranker) fail(reranker.error());
    const std::string query = inputs["rerank"]["query"];
    const auto passages = inputs["rerank"]["passages"].get<std::vector<std::string>>();
    auto ms = time_runs(std::min(warmup, 3), settings.value("rerank_runs", 20), [&] {
      if (auto s = (*reranker)->score(query, passages); !s) fail(s.error());
    });
    json line = latency({{"case", "rerank50"},
                         {"impl", "kotae"},
                         {"precision", "fp32"},
                         {"version", version},
                         {"pairs", passages.size()}},
                        ms);
    emit(line);
  }
  return 0;
}
