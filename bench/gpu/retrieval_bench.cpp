// Kotae's retrieval path on the GPU as a request sees it, from text: Kotae's tokenizer, the dynamic
// batcher (batch/dynamic_batcher.h) in front of the native encoder and in front of the native
// cross-encoder, and exact top-k over the passages' vectors. JSON lines:
//   - the encoder from text at batch 1 and batch B, called directly and through the batcher (one
//     caller, then B concurrent callers sharing batches);
//   - reranking P (query, passage) pairs in one call, tokenisation included;
//   - retrieval + rerank end to end at steady request rates, open loop: each request's latency counts
//     from its scheduled start, so a slow answer cannot hide by delaying the requests behind it.
// Vector search is exact (a dot product per passage): the passages are a few hundred, and Kotae's
// HNSW index is measured on its own by bench/vector_index.
//
// Usage: retrieval_bench ENCODER.safetensors CROSS.safetensors TOKENIZER.json PASSAGES QUERIES
//          [--seconds S] [--rates 50,200] [--candidates K] [--batch B] [--rerank-pairs P]
//          [--max-passages N] [--passage-tokens T] [--warm-up N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch/dynamic_batcher.h"
#include "bench/gpu/bert_engine.h"
#include "bench/gpu/encoder_timing.h"
#include "text/wordpiece_tokenizer.h"

namespace {

using namespace kotae;
using kotae::percentile;
using Clock = std::chrono::steady_clock;
using Ids = std::vector<int>;

struct Options {
  double seconds = 5;
  std::vector<double> rates = {50, 200};
  std::size_t candidates = 30;  // HybridRetriever's rerank_candidates
  int batch = 64, rerank_pairs = 100, passage_tokens = 256;
  std::size_t max_passages = 0;
  int warm_up = 20;  // requests through the whole path before the rates are measured
};

std::vector<std::string> read_lines(const char* path, std::size_t limit = 0) {
  std::ifstream in(path);
  if (!in) std::fprintf(stderr, "cannot read %s\n", path), std::exit(1);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && (!limit || lines.size() < limit);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

Ids to_ids(const text::Encoding& e) {
  return {e.ids.begin(), e.ids.end()};
}

// The model behind a dynamic batcher: many threads submit, one worker runs the engine.
template <class Request, class Response>
class Batched {
 public:
  using Run = std::function<std::vector<Response>(std::vector<Request>&)>;
  Batched(std::string name, batch::BatchPolicy policy, Run run)
      : batcher_(std::move(name), policy, [run](std::vector<Request>& requests) {
          std::vector<Result<Response>> out;
          try {
            for (auto& r : run(requests)) out.emplace_back(std::move(r));
          } catch (const std::exception& e) {
            out.assign(requests.size(), Result<Response>(make_error(ErrorCode::internal, e.what())));
          }
          return out;
        }) {}
  std::future<Result<Response>> submit(Request r, std::size_t cost) { return batcher_.submit(std::move(r), cost); }

 private:
  batch::DynamicBatcher<Request, Response> batcher_;
};

void print_timing(const char* name, const std::string& engine, const char* how, int batch, const EncoderTiming& t,
                  const char* extra = "") {
  std::printf(
      "{\"name\": \"%s\", \"engine\": \"%s\", \"from\": \"text\", \"batcher\": %s, \"batch\": %d, \"calls\": %zu, "
      "\"p50_ms\": %.4f, \"p95_ms\": %.4f, \"p99_ms\": %.4f, \"texts_per_s\": %.1f%s}\n",
      name, engine.c_str(), how, batch, t.calls, t.p50_ms, t.p95_ms, t.p99_ms, t.texts_per_s, extra);
  std::fflush(stdout);
}

// `callers` threads each submitting one text at a time for `seconds`: per-text latency and throughput.
template <class Submit>
EncoderTiming concurrent(int callers, double seconds, Submit submit) {
  std::vector<std::vector<double>> ms(callers);
  std::atomic<std::size_t> done{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      for (std::size_t i = c; std::chrono::duration<double>(Clock::now() - start).count() < seconds; i += callers) {
        const auto t0 = Clock::now();
        submit(i);
        ms[c].push_back(ms_since(t0));
        ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& m : ms) all.insert(all.end(), m.begin(), m.end());
  return {all.size(), percentile(all, 50), percentile(all, 95), percentile(all, 99), done / elapsed};
}

// A fixed pool of threads running queued jobs; the open-loop driver hands each request to it.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void run(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    wake_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 6; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--seconds")
      o.seconds = std::stod(value);
    else if (flag == "--candidates")
      o.candidates = std::stoul(value);
    else if (flag == "--batch")
      o.batch = std::stoi(value);
    else if (flag == "--rerank-pairs")
      o.rerank_pairs = std::stoi(value);
    else if (flag == "--max-passages")
      o.max_passages = std::stoul(value);
    else if (flag == "--passage-tokens")
      o.passage_tokens = std::stoi(value);
    else if (flag == "--warm-up")
      o.warm_up = std::stoi(value);
    else if (flag == "--rates") {
      o.rates.clear();
      std::stringstream list(value);
      for (std::string r; std::getline(list, r, ',');) o.rates.push_back(std::stod(r));
    } else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: retrieval_bench ENCODER.safetensors CROSS.safetensors TOKENIZER.json PASSAGES QUERIES "
                 "[--seconds S] [--rates 50,200] [--candidates K] [--batch B] [--rerank-pairs P] "
                 "[--max-passages N] [--passage-tokens T] [--warm-up N]\n");
    return 2;
  }
  const Options o = parse(argc, argv);
  const auto encoder_weights = cuda::load_bert_weights(argv[1], 12);
  const auto cross_weights = cuda::load_bert_weights(argv[2], 12);
  if (!cross_weights.is_cross_encoder()) return std::fprintf(stderr, "%s has no classifier head\n", argv[2]), 1;
  auto tokenizer_or = text::WordPieceTokenizer::from_tokenizer_json(argv[3]);
  if (!tokenizer_or) return std::fprintf(stderr, "%s\n", tokenizer_or.error().message.c_str()), 1;
  const auto tokenizer = std::move(*tokenizer_or);
  const auto passages = read_lines(argv[4], o.max_passages);
  const auto queries = read_lines(argv[5]);
  const std::size_t candidates = std::min(o.candidates, passages.size());

  bench::BertEngine encoder(encoder_weights, o.batch, o.passage_tokens);
  bench::BertEngine cross(cross_weights, 128, o.passage_tokens);
  const int hidden = encoder_weights.hidden;
  const std::string engine = encoder.name();
  auto encode_query = [&](const std::string& q) { return to_ids(tokenizer.encode(q, 128)); };
  auto encode_pair = [&](const std::string& q, const std::string& p) {
    const auto e = tokenizer.encode_pair(q, p, o.passage_tokens, text::PairTruncation::only_second);
    return cuda::PairTokens{to_ids(e), {e.type_ids.begin(), e.type_ids.end()}};
  };

  // The index: every passage's vector, encoded in batches.
  auto t0 = Clock::now();
  std::vector<float> index;
  for (std::size_t first = 0; first < passages.size(); first += o.batch) {
    std::vector<Ids> group;
    for (std::size_t i = first; i < std::min(passages.size(), first + o.batch); ++i) {
      group.push_back(to_ids(tokenizer.encode(passages[i], o.passage_tokens)));
    }
    const auto v = encoder.embed(group);
    index.insert(index.end(), v.begin(), v.end());
  }
  std::printf(
      "{\"name\": \"retrieval_index\", \"engine\": \"%s\", \"device\": \"%s\", \"passages\": %zu, \"queries\": %zu, "
      "\"milliseconds\": %.1f}\n",
      engine.c_str(), encoder.device().c_str(), passages.size(), queries.size(), ms_since(t0));
  std::fflush(stdout);

#ifndef KOTAE_BENCH_CPU_REFERENCE
  {  // the GPU's scores and vectors against the FP32 CPU reference, on a few short inputs
    std::vector<cuda::PairTokens> pairs;
    std::vector<Ids> texts;
    for (int i = 0; i < 3; ++i) {
      pairs.push_back(encode_pair(queries[i], passages[i].substr(0, 300)));
      texts.push_back(encode_query(queries[i]));
    }
    const auto gpu = cross.score(pairs), cpu = cuda::bert_reference_score(cross_weights, pairs);
    double worst = 0;
    for (std::size_t i = 0; i < gpu.size(); ++i) worst = std::max(worst, std::abs(double(gpu[i]) - cpu[i]));
    const auto vectors = encoder.embed(texts);
    const auto reference = cuda::bert_reference_embed(encoder_weights, texts);
    double cosine = 1;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      cosine = std::min(
          cosine, std::inner_product(reference[i].begin(), reference[i].end(), vectors.begin() + i * hidden, 0.0));
    }
    std::printf(
        "{\"name\": \"cross_encoder_reference\", \"engine\": \"%s\", \"pairs\": 3, \"max_abs_score_diff\": %.6f, "
        "\"score_range\": [%.4f, %.4f], \"encoder_min_cosine\": %.7f}\n",
        engine.c_str(), worst, *std::min_element(cpu.begin(), cpu.end()), *std::max_element(cpu.begin(), cpu.end()),
        cosine);
  }
#endif

  // The encoder from text: directly, then through the batcher.
  for (int batch : {1, o.batch}) {
    std::vector<const std::string*> group(batch);
    const auto t = time_encoder(
        o.seconds, batch,
        [&](std::size_t done) {
          for (int b = 0; b < batch; ++b) group[b] = &queries[(done + b) % queries.size()];
        },
        [&] {
          std::vector<Ids> ids;
          for (const auto* q : group) ids.push_back(encode_query(*q));
          encoder.embed(ids);
        });
    print_timing("encoder", engine, "false", batch, t);
  }
  batch::BatchPolicy encode_policy;
  encode_policy.max_items = o.batch;
  encode_policy.window = std::chrono::microseconds(1000);
  Batched<Ids, std::vector<float>> encoder_batcher("encoder", encode_policy, [&](std::vector<Ids>& texts) {
    const auto flat = encoder.embed(texts);
    std::vector<std::vector<float>> out;
    for (std::size_t i = 0; i < texts.size(); ++i)
      out.emplace_back(flat.begin() + i * hidden, flat.begin() + (i + 1) * hidden);
    return out;
  });
  auto embed_batched = [&](const std::string& q) {
    auto ids = encode_query(q);
    const auto cost = ids.size();
    auto r = encoder_batcher.submit(std::move(ids), cost).get();
    if (!r) throw std::runtime_error(r.error().message);
    return std::move(*r);
  };
  for (int callers : {1, o.batch}) {
    const auto t = concurrent(callers, o.seconds, [&](std::size_t i) { embed_batched(queries[i % queries.size()]); });
    char extra[64];
    std::snprintf(extra, sizeof extra, ", \"callers\": %d", callers);
    print_timing("encoder", engine, "true", callers, t, extra);
  }

  // Reranking P pairs in one call, from text.
  {
    std::size_t round = 0;
    const auto t = time_encoder(
        o.seconds, o.rerank_pairs, [&](std::size_t) { ++round; },
        [&] {
          const auto& q = queries[round % queries.size()];
          std::vector<cuda::PairTokens> pairs;
          for (int i = 0; i < o.rerank_pairs; ++i)
            pairs.push_back(encode_pair(q, passages[(round + i) % passages.size()]));
          cross.score(pairs);
        });
    std::printf(
        "{\"name\": \"rerank\", \"engine\": \"%s\", \"from\": \"text\", \"pairs\": %d, \"max_tokens\": %d, "
        "\"calls\": %zu, \"p50_ms\": %.4f, \"p95_ms\": %.4f, \"pairs_per_s\": %.1f}\n",
        engine.c_str(), o.rerank_pairs, o.passage_tokens, t.calls, t.p50_ms, t.p95_ms, t.texts_per_s);
    std::fflush(stdout);
  }

  // Retrieval + rerank at steady rates: query vector through the encoder's batcher, exact top-K,
  // K pairs through the cross-encoder's batcher (pairs of concurrent requests share its batches).
  batch::BatchPolicy rerank_policy;
  rerank_policy.max_items = 128;
  rerank_policy.max_tokens = 128 * static_cast<std::size_t>(o.passage_tokens);
  rerank_policy.window = std::chrono::microseconds(1000);
  Batched<cuda::PairTokens, float> reranker("reranker", rerank_policy,
                                            [&](std::vector<cuda::PairTokens>& pairs) { return cross.score(pairs); });
  auto answer = [&](const std::string& q) {
    const auto vector = embed_batched(q);
    std::vector<float> similarity(passages.size());
    for (std::size_t p = 0; p < passages.size(); ++p) {
      similarity[p] = std::inner_product(vector.begin(), vector.end(), index.begin() + p * hidden, 0.0f);
    }
    std::vector<std::size_t> order(passages.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + candidates, order.end(),
                      [&](auto a, auto b) { return similarity[a] > similarity[b]; });
    std::vector<std::future<Result<float>>> scores;
    for (std::size_t k = 0; k < candidates; ++k) {
      auto pair = encode_pair(q, passages[order[k]]);
      const auto cost = pair.ids.size();
      scores.push_back(reranker.submit(std::move(pair), cost));
    }
    std::vector<std::pair<float, std::size_t>> ranked;
    for (std::size_t k = 0; k < candidates; ++k) {
      auto s = scores[k].get();
      if (!s) throw std::runtime_error(s.error().message);
      ranked.emplace_back(*s, order[k]);
    }
    std::sort(ranked.rbegin(), ranked.rend());
    return ranked;
  };
  for (int i = 0; i < o.warm_up; ++i) answer(queries[i % queries.size()]);
  for (double rate : o.rates) {
    const auto requests = std::max<std::size_t>(1, static_cast<std::size_t>(rate * o.seconds));
    std::vector<double> latency(requests, -1);
    std::atomic<std::size_t> errors{0};
    {
      Pool pool(64);
      const auto start = Clock::now();
      for (std::size_t i = 0; i < requests; ++i) {
        const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate));
        std::this_thread::sleep_until(due);
        pool.run([&, i, due] {
          try {
            answer(queries[i % queries.size()]);
            latency[i] = std::chrono::duration<double, std::milli>(Clock::now() - due).count();
          } catch (const std::exception&) {
            ++errors;
          }
        });
      }
    }
    std::vector<double> ok;
    for (double l : latency)
      if (l >= 0) ok.push_back(l);
    if (ok.empty()) ok.push_back(0);
    std::printf(
        "{\"name\": \"retrieval_rerank\", \"engine\": \"%s\", \"rate\": %.0f, \"requests\": %zu, \"errors\": %zu, "
        "\"candidates\": %zu, \"passages\": %zu, \"p50_ms\": %.3f, \"p95_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": "
        "%.3f}\n",
        engine.c_str(), rate, requests, errors.load(), candidates, passages.size(), percentile(ok, 50),
        percentile(ok, 95), percentile(ok, 99), *std::max_element(ok.begin(), ok.end()));
    std::fflush(stdout);
  }
  return 0;
}
