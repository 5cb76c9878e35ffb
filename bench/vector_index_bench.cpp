// kotae-bench-vector-index: usearch against hnswlib on Kotae's own chunk embeddings, to pick the
// vector index by recall@10 (against exact search) and single-thread queries per second.
//
// Input: two .npy files (float32, C order, (n, dim), unit vectors) written by
// bench/make_chunk_vectors.py: real chunk embeddings (the base) and held-out real texts (the
// queries). Larger scales are synthesised: the real vectors first, then noisy copies of them
// (v + Gaussian noise with sigma chosen for cosine(copy, v) ~= --copy-cosine, renormalised).
// Prints one JSON object per line: the data set, one per (library, n, M, ef_search) case, and a
// summary naming the fastest setting per library that reaches --min-recall at the largest n.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hnswlib/hnswlib.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <usearch/index_dense.hpp>

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Row-major float32 vectors, one per row.
struct Matrix {
  std::size_t rows = 0;
  std::size_t dim = 0;
  std::vector<float> values;
  const float* row(std::size_t i) const { return values.data() + i * dim; }
  float* row(std::size_t i) { return values.data() + i * dim; }
};

// Reads the .npy subset numpy writes for a C-order float32 matrix.
Matrix load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  char magic[8];
  in.read(magic, 8);
  if (!in || std::string(magic, 6) != "\x93NUMPY") throw std::runtime_error(path + " is not a .npy file");
  std::size_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (std::size_t{b[1]} << 8);
  } else {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (std::size_t{b[1]} << 8) | (std::size_t{b[2]} << 16) | (std::size_t{b[3]} << 24);
  }
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  std::smatch m;
  if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos ||
      !std::regex_search(header, m, std::regex(R"('shape':\s*\((\d+),\s*(\d+)\))")))
    throw std::runtime_error(path + ": expected a C-order float32 (n, dim) array, header " + header);
  Matrix out;
  out.rows = std::stoul(m[1]);
  out.dim = std::stoul(m[2]);
  out.values.resize(out.rows * out.dim);
  in.read(reinterpret_cast<char*>(out.values.data()), static_cast<std::streamsize>(out.values.size() * sizeof(float)));
  if (!in) throw std::runtime_error(path + ": file shorter than its header says");
  return out;
}

// Eight partial sums so the compiler vectorises it without -ffast-math; 384 = 48 * 8.
float dot(const float* a, const float* b, std::size_t dim) {
  float acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= dim; i += 8)
    for (std::size_t j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  float sum = 0;
  for (; i < dim; ++i) sum += a[i] * b[i];
  for (float x : acc) sum += x;
  return sum;
}

void normalise(float* v, std::size_t dim) {
  const float norm = std::sqrt(dot(v, v, dim));
  for (std::size_t i = 0; i < dim; ++i) v[i] /= norm;
}

void parallel_for(std::size_t count, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& body) {
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < count; i += threads) body(i, t);
    });
  for (auto& th : pool) th.join();
}

// The real vectors, then noisy renormalised copies of them up to `rows`.
struct Synthesised {
  Matrix vectors;
  double sigma = 0;
  double mean_copy_cosine = 1;
};

Synthesised synthesise(const Matrix& real, std::size_t rows, double copy_cosine, unsigned seed) {
  Synthesised out;
  out.vectors.rows = rows;
  out.vectors.dim = real.dim;
  out.vectors.values.resize(rows * real.dim);
  // |noise|^2 ~= dim * sigma^2 and cos(v + noise, v) ~= 1 / sqrt(1 + dim * sigma^2) for unit v.
  out.sigma = std::sqrt((1.0 / (copy_cosine * copy_cosine) - 1.0) / static_cast<double>(real.dim));
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, static_cast<float>(out.sigma));
  double cos_sum = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const float* source = real.row(i % real.rows);
    float* v = out.vectors.row(i);
    std::copy(source, source + real.dim, v);
    if (i < real.rows) continue;
    for (std::size_t d = 0; d < real.dim; ++d) v[d] += noise(rng);
    normalise(v, real.dim);
    cos_sum += dot(v, source, real.dim);
  }
  if (rows > real.rows) out.mean_copy_cosine = cos_sum / static_cast<double>(rows - real.rows);
  return out;
}

// Exact top-k by inner product (the vectors are unit length, so this is cosine).
std::vector<std::vector<std::uint64_t>> exact_top_k(const Matrix& base, const Matrix& queries, std::size_t k,
                                                    std::size_t threads) {
  std::vector<std::vector<std::uint64_t>> out(queries.rows);
  parallel_for(queries.rows, threads, [&](std::size_t q, std::size_t) {
    std::vector<std::pair<float, std::uint64_t>> scored(base.rows);
    for (std::size_t i = 0; i < base.rows; ++i) scored[i] = {dot(queries.row(q), base.row(i), base.dim), i};
    std::partial_sort(
        scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(k), scored.end(),
        [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    for (std::size_t j = 0; j < k; ++j) out[q].push_back(scored[j].second);
  });
  return out;
}

struct IndexSettings {
  std::size_t m = 16;
  std::size_t ef_construction = 128;
};

// One candidate library behind the few calls the benchmark needs.
class CandidateIndex {
 public:
  virtual ~CandidateIndex() = default;
  virtual void add(std::size_t key, const float* vector, std::size_t thread) = 0;
  virtual void set_ef_search(std::size_t ef) = 0;
  virtual void search(const float* query, std::size_t k, std::vector<std::uint64_t>& keys) = 0;
  virtual std::size_t memory_bytes() const = 0;
};

// usearch's dense index; `metric` is its built-in inner product or ours.
class UsearchIndex final : public CandidateIndex {
 public:
  UsearchIndex(unum::usearch::metric_punned_t metric, std::size_t capacity, IndexSettings settings,
               std::size_t threads) {
    unum::usearch::index_dense_config_t config(unum::usearch::index_config_t(settings.m));
    config.expansion_add = settings.ef_construction;
    auto made = unum::usearch::index_dense_t::make(metric, config);
    if (!made) throw std::runtime_error(std::string("usearch: ") + made.error.what());
    index_ = std::move(made.index);
    if (!index_.try_reserve(unum::usearch::index_limits_t(capacity, threads)))
      throw std::runtime_error("usearch: cannot reserve the index");
  }
  void add(std::size_t key, const float* vector, std::size_t thread) override {
    auto added = index_.add(key, vector, thread);
    if (!added) throw std::runtime_error(std::string("usearch add: ") + added.error.what());
  }
  void set_ef_search(std::size_t ef) override { index_.change_expansion_search(ef); }
  void search(const float* query, std::size_t k, std::vector<std::uint64_t>& keys) override {
    auto found = index_.search(query, k, 0);
    keys.clear();
    for (std::size_t i = 0; i < found.size(); ++i) keys.push_back(found[i].member.key);
  }
  std::size_t memory_bytes() const override { return index_.memory_usage(); }

 private:
  unum::usearch::index_dense_t index_;
};

class HnswlibIndex final : public CandidateIndex {
 public:
  HnswlibIndex(std::size_t dim, std::size_t capacity, IndexSettings settings)
      : space_(dim), index_(&space_, capacity, settings.m, settings.ef_construction, /*random_seed=*/100) {}
  void add(std::size_t key, const float* vector, std::size_t) override { index_.addPoint(vector, key); }
  void set_ef_search(std::size_t ef) override { index_.setEf(ef); }
  void search(const float* query, std::size_t k, std::vector<std::uint64_t>& keys) override {
    auto found = index_.searchKnn(query, k);
    keys.resize(found.size());
    for (std::size_t i = found.size(); i-- > 0; found.pop()) keys[i] = found.top().second;
  }
  // hnswlib reports no size: count what it allocates (level-0 block, upper-level links, one
  // lock and one link-list pointer per element, the label map's nodes).
  std::size_t memory_bytes() const override {
    std::size_t bytes =
        index_.max_elements_ * (index_.size_data_per_element_ + sizeof(std::mutex) + sizeof(void*) + sizeof(int));
    for (std::size_t i = 0; i < index_.cur_element_count; ++i)
      bytes += static_cast<std::size_t>(std::max(index_.element_levels_[i], 0)) * index_.size_links_per_element_;
    bytes += index_.label_lookup_.size() * (sizeof(hnswlib::labeltype) + sizeof(hnswlib::tableint) + 2 * sizeof(void*));
    return bytes;
  }

 private:
  hnswlib::InnerProductSpace space_;
  hnswlib::HierarchicalNSW<float> index_;
};

// Our inner-product distance for usearch: the vectorisable dot(), as 1 - similarity.
unum::usearch::distance_punned_t ip_distance(std::size_t a, std::size_t b, std::size_t dim) {
  return 1.0f - dot(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), dim);
}

std::unique_ptr<CandidateIndex> make_index(const std::string& library, std::size_t dim, std::size_t capacity,
                                           IndexSettings settings, std::size_t threads) {
  using namespace unum::usearch;
  if (library == "usearch")
    return std::make_unique<UsearchIndex>(metric_punned_t(dim, metric_kind_t::ip_k, scalar_kind_t::f32_k), capacity,
                                          settings, threads);
  if (library == "usearch-simd-ip")
    return std::make_unique<UsearchIndex>(
        metric_punned_t(dim, reinterpret_cast<std::uintptr_t>(&ip_distance),
                        metric_punned_signature_t::array_array_size_k, metric_kind_t::ip_k, scalar_kind_t::f32_k),
        capacity, settings, threads);
  if (library == "hnswlib") return std::make_unique<HnswlibIndex>(dim, capacity, settings);
  throw std::runtime_error("unknown library '" + library + "' (usearch, usearch-simd-ip, hnswlib)");
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size()))) - 1;
  return values[std::min(at, values.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"usearch vs hnswlib on Kotae's chunk embeddings: recall@10 and single-thread queries/s"};
  std::string base_path, queries_path, note;
  std::vector<std::size_t> sizes{10000, 100000}, ms{16, 32}, efs{32, 64, 128, 256};
  std::vector<std::string> libraries{"usearch", "usearch-simd-ip", "hnswlib"};
  std::size_t ef_construction = 128, threads = 2, k = 10, repeats = 3;
  double copy_cosine = 0.9, min_recall = 0.98;
  unsigned seed = 42;
  app.add_option("--base", base_path, "real chunk embeddings (.npy, float32 (n, dim))")->required();
  app.add_option("--queries", queries_path, "query embeddings (.npy, float32 (n, dim))")->required();
  app.add_option("--sizes", sizes, "index sizes; beyond the real vectors, noisy copies")->delimiter(',');
  app.add_option("--m", ms, "graph degrees M")->delimiter(',');
  app.add_option("--ef-construction", ef_construction, "ef at build time");
  app.add_option("--ef-search", efs, "ef values at query time")->delimiter(',');
  app.add_option("--libraries", libraries, "usearch, usearch-simd-ip, hnswlib")->delimiter(',');
  app.add_option("--threads", threads, "threads for building and exact search (queries: 1)");
  app.add_option("--repeats", repeats, "passes over the queries per setting; the fastest is reported")
      ->check(CLI::PositiveNumber);
  app.add_option("--copy-cosine", copy_cosine, "target cosine between a synthetic copy and its real vector");
  app.add_option("--min-recall", min_recall, "recall@10 the recommended setting must reach");
  app.add_option("--seed", seed, "noise seed");
  app.add_option("--note", note, "free text copied into the dataset line (where the vectors came from)");
  CLI11_PARSE(app, argc, argv);

  try {
    const Matrix real = load_npy(base_path);
    const Matrix queries = load_npy(queries_path);
    if (real.dim != queries.dim) throw std::runtime_error("base and queries differ in dimension");
    std::cout << Json{{"name", "dataset"},
                      {"real_vectors", real.rows},
                      {"queries", queries.rows},
                      {"dimension", real.dim},
                      {"k", k},
                      {"metric", "inner product of unit vectors (cosine)"},
                      {"synthetic", "beyond the real vectors: real vector + N(0, sigma^2) noise, renormalised"},
                      {"note", note}}
                     .dump()
              << std::endl;

    Json best_at_largest = Json::object();
    const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
    for (std::size_t n : sizes) {
      const Synthesised data = synthesise(real, n, copy_cosine, seed);
      auto start = Clock::now();
      const auto truth = exact_top_k(data.vectors, queries, k, threads);
      std::cout << Json{{"name", "exact/n=" + std::to_string(n)},
                        {"n", n},
                        {"real", std::min(n, real.rows)},
                        {"synthetic", n > real.rows ? n - real.rows : 0},
                        {"noise_sigma", n > real.rows ? data.sigma : 0.0},
                        {"mean_cosine_copy_to_real", data.mean_copy_cosine},
                        {"exact_search_s", seconds_since(start)},
                        {"threads", threads}}
                       .dump()
                << std::endl;
      for (const auto& library : libraries)
        for (std::size_t m : ms) {
          auto index = make_index(library, data.vectors.dim, n, {m, ef_construction}, threads);
          start = Clock::now();
          parallel_for(n, threads, [&](std::size_t i, std::size_t t) { index->add(i, data.vectors.row(i), t); });
          const double build_s = seconds_since(start);
          const std::size_t memory = index->memory_bytes();
          for (std::size_t ef : efs) {
            index->set_ef_search(ef);
            // The fastest of `repeats` passes over all queries: other processes on a shared machine
            // only ever add time. Recall is the same in every pass (search is deterministic).
            std::vector<std::uint64_t> keys;
            std::vector<double> latency_us, best_latency_us;
            std::size_t hits = 0;
            double total_s = 0;
            for (std::size_t pass = 0; pass < repeats; ++pass) {
              latency_us.clear();
              const auto all = Clock::now();
              for (std::size_t q = 0; q < queries.rows; ++q) {
                const auto one = Clock::now();
                index->search(queries.row(q), k, keys);
                latency_us.push_back(seconds_since(one) * 1e6);
                if (pass == 0)
                  for (auto key : keys)
                    hits += static_cast<std::size_t>(std::count(truth[q].begin(), truth[q].end(), key));
              }
              const double pass_s = seconds_since(all);
              if (pass == 0 || pass_s < total_s) {
                total_s = pass_s;
                best_latency_us = latency_us;
              }
            }
            Json line{{"name", library + "/n=" + std::to_string(n) + "/M=" + std::to_string(m) +
                                   "/efc=" + std::to_string(ef_construction) + "/ef=" + std::to_string(ef)},
                      {"library", library},
                      {"n", n},
                      {"M", m},
                      {"ef_construction", ef_construction},
                      {"ef_search", ef},
                      {"build_s", build_s},
                      {"build_threads", threads},
                      {"memory_mib", static_cast<double>(memory) / (1024.0 * 1024.0)},
                      {"recall_at_10", static_cast<double>(hits) / static_cast<double>(queries.rows * k)},
                      {"qps", static_cast<double>(queries.rows) / total_s},
                      {"p50_us", percentile(best_latency_us, 50)},
                      {"p99_us", percentile(best_latency_us, 99)},
                      {"query_passes", repeats}};
            std::cout << line.dump() << std::endl;
            if (n == largest && line["recall_at_10"].get<double>() >= min_recall &&
                (!best_at_largest.contains(library) || line["qps"] > best_at_largest[library]["qps"]))
              best_at_largest[library] = line;
          }
        }
    }

    Json summary{{"name", "summary"}, {"n", largest}, {"min_recall_at_10", min_recall}, {"best", best_at_largest}};
    std::string fastest;
    for (const auto& [library, line] : best_at_largest.items())
      if (fastest.empty() || line["qps"] > best_at_largest[fastest]["qps"]) fastest = library;
    summary["recommended"] = fastest.empty() ? Json(nullptr) : best_at_largest[fastest];
    if (best_at_largest.contains("usearch") && best_at_largest.contains("hnswlib"))
      summary["usearch_vs_hnswlib_qps"] =
          best_at_largest["usearch"]["qps"].get<double>() / best_at_largest["hnswlib"]["qps"].get<double>();
    if (best_at_largest.contains("usearch-simd-ip") && best_at_largest.contains("hnswlib"))
      summary["usearch_simd_ip_vs_hnswlib_qps"] =
          best_at_largest["usearch-simd-ip"]["qps"].get<double>() / best_at_largest["hnswlib"]["qps"].get<double>();
    std::cout << summary.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "kotae-bench-vector-index: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
