#pragma once
// An approximate nearest-neighbour index (HNSW, cosine similarity, float32) over chunk embeddings,
// keyed by chunk id. It hides the library behind it (hnswlib 0.8, through its public API only, chosen
// by bench/vector_index over usearch) so that another one can take its place after a benchmark
// without touching the collection. Removed keys leave their node in the graph, marked; the next
// additions reuse those nodes before the graph grows (a removed key added again takes its own).
//
// Thread safety: search(), search_exact(), get(), contains(), size(), keys() and save() may run
// on any number of threads at once; add(), add_many(), remove() need the caller to exclude every
// other call (Collection holds a shared_mutex for that).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/result.h"

namespace kotae::store {

// Graph parameters. The defaults are hnswlib's usual ones; a benchmark may tune them.
struct VectorIndexSettings {
  std::size_t connectivity = 16;    // M: neighbours per node (fixed when the index is created)
  std::size_t expansion_add = 128;  // ef_construction: candidates kept while inserting
  // ef_search: candidates kept while searching (at least k). 160 reaches recall@10 0.988 at 100k
  // chunks in bench/retrieval (64 reached 0.93 there) for about 0.35 ms more per query; on
  // bench/vector_index's 100k, 0.996 in 0.18 ms p50 (64: 0.98 in 0.09 ms).
  std::size_t expansion_search = 160;
  // An index this small is searched by comparing every vector: exact, and about as fast as a graph
  // walk (at 5,000 vectors of dimension 384 the full comparison ran at 0.5 to 0.9 times the speed
  // of ef_search=64, and faster than any setting that reached recall 0.98 on random vectors). While
  // it is this small the index also keeps its vectors in rows for that comparison (at most this many
  // times the dimension floats), since hnswlib hands a stored vector out only one copy at a time.
  std::size_t exact_search_below = 10000;
};

struct Neighbour {
  std::int64_t key = 0;
  float similarity = 0;  // cosine similarity, 1 is the same direction
};

class VectorIndex {
 public:
  // Which keys a search may return.
  using Predicate = std::function<bool(std::int64_t key)>;

  static Result<std::unique_ptr<VectorIndex>> create(std::size_t dimension, VectorIndexSettings settings = {});
  // Reads a file written by save(): the index and the change-log position it reflects. A missing
  // file is not_found; a damaged one (checksum, format, another dimension) is corrupt.
  struct Loaded;
  static Result<Loaded> load(const std::filesystem::path& path, std::size_t dimension,
                             VectorIndexSettings settings = {});

  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  // Adds a vector under a key that is not in the index.
  Result<void> add(std::int64_t key, std::span<const float> vector);
  // Adds keys.size() vectors (row-major) using up to `threads` threads: how a rebuild goes fast.
  Result<void> add_many(std::span<const std::int64_t> keys, std::span<const float> vectors, std::size_t threads);
  // false when the key was not there.
  bool remove(std::int64_t key);

  bool contains(std::int64_t key) const;
  std::size_t size() const;
  std::size_t dimension() const { return dimension_; }
  std::vector<std::int64_t> keys() const;  // ascending
  // Copies the vector stored under `key` into `out` (dimension() floats); false when absent.
  bool get(std::int64_t key, std::span<float> out) const;

  // The k nearest keys, most similar first; `predicate` (when given) restricts the keys returned.
  Result<std::vector<Neighbour>> search(std::span<const float> query, std::size_t k,
                                        const Predicate* predicate = nullptr) const;
  // Every vector compared: the reference for recall.
  Result<std::vector<Neighbour>> search_exact(std::span<const float> query, std::size_t k) const;

  // Writes the index with `log_position` to `path` atomically: a temporary file beside it,
  // fsync, rename over `path`, fsync of the folder. A crash leaves the old file or the new one.
  // The file is hnswlib's own saveIndex output, the keys, and a trailer of ours (format version,
  // dimension, log position, checksum); load() reports a file of an older format as corrupt, so that
  // the collection rebuilds it from its database.
  Result<void> save(const std::filesystem::path& path, std::int64_t log_position) const;

  const VectorIndexSettings& settings() const { return settings_; }
  // Search breadth may change between searches (not during one); connectivity may not.
  void set_expansion_search(std::size_t expansion);
  void set_exact_search_below(std::size_t count);

 private:
  struct Impl;
  VectorIndex(std::unique_ptr<Impl> impl, std::size_t dimension, VectorIndexSettings settings);
  std::unique_ptr<Impl> impl_;
  std::size_t dimension_;
  VectorIndexSettings settings_;
};

struct VectorIndex::Loaded {
  std::unique_ptr<VectorIndex> index;
  std::int64_t log_position = 0;
};

// Cosine similarity of two vectors of the same length (0 when either is all zeros).
float cosine_similarity(std::span<const float> a, std::span<const float> b);

}  // namespace kotae::store
