#include "store/vector_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <hnswlib/hnswlib.h>

#include "core/assert.h"
#include "store/atomic_file.h"

namespace kotae::store {

namespace {

using Graph = hnswlib::HierarchicalNSW<float>;

// A new index has room for this many vectors; it doubles when it runs out.
constexpr std::size_t kInitialCapacity = 1024;

hnswlib::labeltype label_of(std::int64_t key) {
  return static_cast<hnswlib::labeltype>(key);
}

// --- the file: hnswlib's saveIndex output, the keys, our trailer --------------------------------------
//
// The graph is exactly what hnswlib's saveIndex writes, and what its loading constructor reads back.
// hnswlib has no call that lists its labels or tells a removed one from an absent one, so the keys
// follow: the live ones, then the removed ones whose node may still carry them (ascending, int64).
// Our part is a trailer rather than a header because saveIndex writes a file of its own from its first
// byte: appending to that file gives the whole index in one piece for write_file_atomically, without
// a copy of the graph.

constexpr std::array<char, 8> kMagic = {'K', 'O', 'T', 'A', 'E', 'V', 'E', 'C'};
// 1: usearch's serialisation; 2: hnswlib 0.6's layout, read and written field by field by us (both
// behind a 40-byte header at the start of the file); 3: hnswlib 0.8's saveIndex, the keys and this
// trailer. A file of another version is reported as such, and the collection rebuilds it.
constexpr std::uint32_t kFileVersion = 3;

struct Trailer {
  std::array<char, 8> magic = kMagic;
  std::uint32_t version = kFileVersion;
  std::uint32_t dimension = 0;
  std::int64_t log_position = 0;
  std::uint64_t graph_bytes = 0;
  std::uint64_t live_keys = 0;
  std::uint64_t removed_keys = 0;
  std::uint32_t connectivity = 0;   // fixed when the graph was made: the file's wins over the caller's
  std::uint32_t expansion_add = 0;  // ef_construction, kept by hnswlib in the graph
  // Of every byte of the file before it: garbage, torn files and a damaged log position are caught.
  std::uint64_t checksum = 0;
};
static_assert(sizeof(Trailer) == 64);
constexpr std::size_t kCheckedTrailerBytes = offsetof(Trailer, checksum);

// FNV-1a 64 over 64-bit little-endian words in four interleaved lanes, the lanes and the length folded
// at the end. A changed word always changes its lane (each step is a bijection of the state), and it
// runs about 10 times as fast as FNV-1a over single bytes: 0.02 s against 0.25 s for the 161 MiB of a
// graph of 100k vectors of dimension 384.
class Checksum {
 public:
  void update(const void* data, std::size_t length) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    total_ += length;
    if (pending_size_ > 0) {
      const std::size_t take = std::min(length, kBlock - pending_size_);
      std::memcpy(pending_.data() + pending_size_, bytes, take);
      pending_size_ += take;
      bytes += take;
      length -= take;
      if (pending_size_ < kBlock) return;
      mix(pending_.data());
      pending_size_ = 0;
    }
    for (; length >= kBlock; bytes += kBlock, length -= kBlock) mix(bytes);
    std::memcpy(pending_.data(), bytes, length);
    pending_size_ = length;
  }
  std::uint64_t value() const {
    Checksum copy = *this;
    if (copy.pending_size_ > 0) {
      std::fill(copy.pending_.begin() + static_cast<std::ptrdiff_t>(copy.pending_size_), copy.pending_.end(), 0);
      copy.mix(copy.pending_.data());
    }
    std::uint64_t state = kOffset;
    for (const std::uint64_t lane : copy.lanes_) state = (state ^ lane) * kPrime;
    return (state ^ total_) * kPrime;
  }

 private:
  static constexpr std::size_t kBlock = 32;
  static constexpr std::uint64_t kOffset = 0xcbf29ce484222325ull, kPrime = 0x100000001b3ull;
  void mix(const unsigned char* block) {
    for (std::size_t lane = 0; lane < 4; ++lane) {
      std::uint64_t word;
      std::memcpy(&word, block + lane * 8, 8);
      lanes_[lane] = (lanes_[lane] ^ word) * kPrime;
    }
  }
  std::array<std::uint64_t, 4> lanes_ = {kOffset, kOffset ^ 1, kOffset ^ 2, kOffset ^ 3};
  std::array<unsigned char, kBlock> pending_{};
  std::size_t pending_size_ = 0;
  std::uint64_t total_ = 0;
};

// An open file descriptor, closed on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A file in memory that hnswlib can open by name: saveIndex and its loading constructor take a path
// only. The graph goes through memory, never through a temporary file on disk (a folder that may be
// read-only, or short of space, when an index is only read).
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("kotae-vector-index", MFD_CLOEXEC)) {}
  bool ok() const { return fd_.get() >= 0; }
  int fd() const { return fd_.get(); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_.get()); }

 private:
  FileDescriptor fd_;
};

// A shared, writable mapping of a whole file, unmapped on every path out.
class Mapping {
 public:
  Mapping(int fd, std::size_t length)
      : length_(length), data_(::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) {}
  ~Mapping() {
    if (ok()) ::munmap(data_, length_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  bool ok() const { return data_ != MAP_FAILED; }
  char* data() const { return static_cast<char*>(data_); }

 private:
  std::size_t length_;
  void* data_;
};

bool write_all(int fd, const void* data, std::size_t length) {
  const auto* bytes = static_cast<const char*>(data);
  while (length > 0) {
    const ssize_t written = ::write(fd, bytes, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes += written;
    length -= static_cast<std::size_t>(written);
  }
  return true;
}

bool read_all_at(int fd, void* data, std::size_t length, std::uint64_t offset) {
  auto* bytes = static_cast<char*>(data);
  while (length > 0) {
    const ssize_t got = ::pread(fd, bytes, length, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes += got;
    offset += static_cast<std::uint64_t>(got);
    length -= static_cast<std::size_t>(got);
  }
  return true;
}

// The distance between two normalised vectors: 1 - their dot product. hnswlib's InnerProductSpace
// picks its SIMD loop when it is compiled, so a portable build (no -march) gets SSE only; sixteen
// independent sums let the compiler vectorise this loop, and on x86-64 it is also built for AVX2/FMA
// and picked when the program loads. Measured against InnerProductSpace on 30,000 embedding-like
// vectors of dimension 384 (M=16, ef_construction=128, ef_search=64, one thread): 1.2-1.4x the
// queries per second and inserts 1.25-1.35x faster.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
float inner_product_distance(const void* a_data, const void* b_data, const void* dimension_data) {
  const auto* a = static_cast<const float*>(a_data);
  const auto* b = static_cast<const float*>(b_data);
  const std::size_t dimension = *static_cast<const std::size_t*>(dimension_data);
  float sums[16] = {};
  std::size_t i = 0;
  for (; i + 16 <= dimension; i += 16) {
    for (std::size_t lane = 0; lane < 16; ++lane) sums[lane] += a[i + lane] * b[i + lane];
  }
  float dot = 0;
  for (; i < dimension; ++i) dot += a[i] * b[i];
  for (const float sum : sums) dot += sum;
  return 1.0f - dot;
}

// hnswlib's view of our vectors (a user-defined space, which hnswlib documents): float32, compared by
// inner_product_distance.
class NormalisedInnerProductSpace final : public hnswlib::SpaceInterface<float> {
 public:
  explicit NormalisedInnerProductSpace(std::size_t dimension) : dimension_(dimension) {}
  std::size_t get_data_size() override { return dimension_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &inner_product_distance; }
  void* get_dist_func_param() override { return &dimension_; }
  const std::size_t* dimension() const { return &dimension_; }

 private:
  std::size_t dimension_;
};

// A search's predicate as hnswlib's filter: searchKnn lets only the labels it accepts into the results.
class AllowedKeys final : public hnswlib::BaseFilterFunctor {
 public:
  explicit AllowedKeys(const VectorIndex::Predicate& allow) : allow_(allow) {}
  bool operator()(hnswlib::labeltype label) override { return allow_(static_cast<std::int64_t>(label)); }

 private:
  const VectorIndex::Predicate& allow_;
};

// `vector` scaled to length 1 (all zeros stays all zeros).
void normalise(std::span<const float> vector, float* out) {
  double norm = 0;
  for (const float x : vector) norm += double(x) * x;
  const double scale = norm > 0 ? 1.0 / std::sqrt(norm) : 0.0;
  for (std::size_t i = 0; i < vector.size(); ++i) out[i] = static_cast<float>(vector[i] * scale);
}

// Most similar first; equal similarities by key, so that results do not depend on node order.
std::vector<Neighbour> most_similar_first(std::vector<Neighbour> neighbours) {
  std::sort(neighbours.begin(), neighbours.end(), [](const Neighbour& a, const Neighbour& b) {
    return a.similarity != b.similarity ? a.similarity > b.similarity : a.key < b.key;
  });
  return neighbours;
}

// The k nearest of the vectors offered one by one.
class Nearest {
 public:
  explicit Nearest(std::size_t k) : k_(k) {}
  void offer(std::int64_t key, float distance) {
    if (kept_.size() < k_) {
      kept_.emplace(distance, key);
    } else if (std::pair(distance, key) < kept_.top()) {
      kept_.pop();
      kept_.emplace(distance, key);
    }
  }
  // Vectors are stored normalised, so the distance is 1 - cosine similarity.
  std::vector<Neighbour> take() {
    std::vector<Neighbour> neighbours;
    neighbours.reserve(kept_.size());
    for (; !kept_.empty(); kept_.pop()) neighbours.push_back({kept_.top().second, 1.0f - kept_.top().first});
    return most_similar_first(std::move(neighbours));
  }

 private:
  std::size_t k_;
  std::priority_queue<std::pair<float, std::int64_t>> kept_;  // the farthest on top
};

// The vectors of an index smaller than exact_search_below, in rows, for the exact search there:
// hnswlib hands a stored vector out only as a new std::vector per call (getDataByLabel, about 0.2 µs
// each, several times what comparing it costs: 2 ms more per search at 10,000). Above the threshold
// they are dropped and the graph answers.
struct Rows {
  std::vector<std::int64_t> keys;
  std::vector<float> values;  // keys.size() x dimension, normalised
  std::unordered_map<std::int64_t, std::size_t> row_of;

  void add(std::int64_t key, const float* vector, std::size_t dimension) {
    row_of[key] = keys.size();
    keys.push_back(key);
    values.insert(values.end(), vector, vector + dimension);
  }
  // The last row takes the place of the removed one.
  void remove(std::int64_t key, std::size_t dimension) {
    const auto found = row_of.find(key);
    if (found == row_of.end()) return;
    const std::size_t row = found->second, last = keys.size() - 1;
    row_of.erase(found);
    if (row != last) {
      keys[row] = keys[last];
      row_of[keys[row]] = row;
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(last * dimension), dimension,
                  values.begin() + static_cast<std::ptrdiff_t>(row * dimension));
    }
    keys.pop_back();
    values.resize(keys.size() * dimension);
  }
  const float* vector(std::size_t row, std::size_t dimension) const { return values.data() + row * dimension; }
};

// Whether `key`'s node is still in the graph, marked deleted; if so it is unmarked. hnswlib reports a
// label it no longer has (its node was taken by another addition) by throwing.
bool take_back(Graph& graph, std::int64_t key) {
  try {
    graph.unmarkDelete(label_of(key));
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

// hnswlib reports failures (out of memory, a broken invariant) by throwing.
Error error_from(const std::exception& thrown, const std::string& doing) {
  if (dynamic_cast<const std::bad_alloc*>(&thrown) != nullptr ||
      std::string_view(thrown.what()).starts_with("Not enough memory")) {
    return make_error(ErrorCode::io, "out of memory " + doing);
  }
  return make_error(ErrorCode::internal, doing + " failed in hnswlib: " + thrown.what());
}

std::vector<std::int64_t> sorted(const std::unordered_set<std::int64_t>& keys) {
  std::vector<std::int64_t> out(keys.begin(), keys.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// --- the index ----------------------------------------------------------------------------------------

struct VectorIndex::Impl {
  NormalisedInnerProductSpace space;  // the graph keeps pointers into it: it lives as long as the graph
  std::unique_ptr<Graph> graph;
  std::unordered_set<std::int64_t> live;  // the keys a search may return
  // Removed keys whose node may still be in the graph, marked deleted (and carrying them) until an
  // addition takes it. A removed key added again must take its own node back: hnswlib's
  // replace_deleted would put it in any removed node and leave its old node labelled with it too, so
  // that the key would be lost when another addition takes that one (nmslib/hnswlib#541).
  std::unordered_set<std::int64_t> removed;
  std::optional<Rows> rows;  // while the index is smaller than exact_search_below

  explicit Impl(std::size_t dimension) : space(dimension) {}
  std::size_t dimension() const { return *space.dimension(); }

  // Room for `more` new nodes, doubling the capacity.
  void reserve_for(std::size_t more) {
    const std::size_t needed = graph->getCurrentElementCount() + more;
    if (needed <= graph->getMaxElements()) return;
    graph->resizeIndex(std::max({needed, 2 * graph->getMaxElements(), kInitialCapacity}));
  }

  // Nodes marked deleted: every node of the graph carries a live key or a removed one.
  std::size_t removed_nodes() const { return graph->getCurrentElementCount() - live.size(); }

  // Forgets the removed keys whose node an addition has taken, once they outnumber the removed nodes
  // (the others are marked again after take_back asked).
  void forget_taken_keys() {
    const std::size_t deleted = removed_nodes();
    if (removed.size() <= deleted) return;
    if (deleted == 0) {
      removed.clear();
      return;
    }
    if (removed.size() < 2 * deleted + 1024) return;  // now and then: each key costs an exception
    for (auto key = removed.begin(); key != removed.end();) {
      if (take_back(*graph, *key)) {
        graph->markDelete(label_of(*key));
        ++key;
      } else {
        key = removed.erase(key);
      }
    }
  }

  // Keeps the rows while fewer than `below` keys are live, and only then.
  void keep_rows(std::size_t below) {
    if (live.size() >= below) {
      rows.reset();
      return;
    }
    if (rows) return;
    rows.emplace();
    for (const std::int64_t key : live) rows->add(key, graph->getDataByLabel<float>(label_of(key)).data(), dimension());
  }

  // The k nearest live keys (that `allow` accepts) by comparing every vector.
  std::vector<Neighbour> compare_all(const float* query, std::size_t k, const Predicate* allow) const {
    Nearest nearest(k);
    const std::size_t* dimension_data = space.dimension();
    if (rows) {
      for (std::size_t row = 0; row < rows->keys.size(); ++row) {
        const std::int64_t key = rows->keys[row];
        if (allow != nullptr && !(*allow)(key)) continue;
        nearest.offer(key, inner_product_distance(query, rows->vector(row, dimension()), dimension_data));
      }
    } else {
      for (const std::int64_t key : live) {
        if (allow != nullptr && !(*allow)(key)) continue;
        const auto vector = graph->getDataByLabel<float>(label_of(key));
        nearest.offer(key, inner_product_distance(query, vector.data(), dimension_data));
      }
    }
    return nearest.take();
  }
};

VectorIndex::VectorIndex(std::unique_ptr<Impl> impl, std::size_t dimension, VectorIndexSettings settings)
    : impl_(std::move(impl)), dimension_(dimension), settings_(settings) {}

VectorIndex::~VectorIndex() = default;

Result<std::unique_ptr<VectorIndex>> VectorIndex::create(std::size_t dimension, VectorIndexSettings settings) {
  if (dimension == 0) return make_error(ErrorCode::invalid_argument, "a vector index needs a dimension above 0");
  if (settings.connectivity < 2) {
    return make_error(ErrorCode::invalid_argument, "a vector index needs a connectivity of 2 or more");
  }
  try {
    auto impl = std::make_unique<Impl>(dimension);
    impl->graph = std::make_unique<Graph>(&impl->space, kInitialCapacity, settings.connectivity, settings.expansion_add,
                                          /*random_seed=*/100, /*allow_replace_deleted=*/true);
    impl->graph->setEf(settings.expansion_search);
    impl->keep_rows(settings.exact_search_below);
    return std::unique_ptr<VectorIndex>(new VectorIndex(std::move(impl), dimension, settings));
  } catch (const std::exception& thrown) {
    return error_from(thrown, "creating a vector index");
  }
}

Result<VectorIndex::Loaded> VectorIndex::load(const std::filesystem::path& path, std::size_t dimension,
                                              VectorIndexSettings settings) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return make_error(ErrorCode::not_found, "no vector index at " + path.string());
    return system_error(errno, path, "open");
  }
  auto damaged = [&](const std::string& why) {
    return make_error(ErrorCode::corrupt, "the vector index " + path.string() + " is damaged: " + why);
  };
  auto older = [&](std::uint32_t version) {
    return make_error(ErrorCode::corrupt, "the vector index " + path.string() + " is in format version " +
                                              std::to_string(version) + ", written by an older Kotae");
  };
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return system_error(errno, path, "stat");
  const auto file_bytes = static_cast<std::uint64_t>(info.st_size);

  // Versions 1 and 2 began with our header: the magic, then the version.
  struct {
    std::array<char, 8> magic{};
    std::uint32_t version = 0;
  } start;
  if (file_bytes >= sizeof start && read_all_at(fd.get(), &start, sizeof start, 0) && start.magic == kMagic &&
      start.version < kFileVersion) {
    return older(start.version);
  }
  Trailer trailer;
  if (file_bytes < sizeof trailer) return damaged("shorter than its trailer");
  if (!read_all_at(fd.get(), &trailer, sizeof trailer, file_bytes - sizeof trailer)) return damaged("unreadable");
  if (trailer.magic != kMagic) return damaged("no trailer at its end (cut short, or not a Kotae vector index)");
  if (trailer.version != kFileVersion) return damaged("format version " + std::to_string(trailer.version));
  if (trailer.dimension != dimension) {
    return damaged("dimension " + std::to_string(trailer.dimension) + ", the collection's is " +
                   std::to_string(dimension));
  }
  const std::uint64_t key_count = trailer.live_keys + trailer.removed_keys;
  if (trailer.live_keys > file_bytes / 8 || trailer.removed_keys > file_bytes / 8 || trailer.graph_bytes == 0 ||
      trailer.graph_bytes > file_bytes || trailer.graph_bytes + key_count * 8 + sizeof trailer != file_bytes) {
    return damaged("its size does not match its trailer (torn write?)");
  }
  if (trailer.connectivity < 2) return damaged("connectivity " + std::to_string(trailer.connectivity));

  // One pass over the file: the checksum, the graph into memory for hnswlib, the keys.
  MemoryFile graph_file;
  if (!graph_file.ok()) return system_error(errno, path, "make a memory file to load");
  std::vector<std::int64_t> keys(static_cast<std::size_t>(key_count));
  {
    Checksum checksum;
    std::vector<char> block(1 << 20);
    const std::uint64_t checked = file_bytes - sizeof trailer + kCheckedTrailerBytes;
    for (std::uint64_t at = 0; at < checked;) {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(checked - at, block.size()));
      if (!read_all_at(fd.get(), block.data(), take, at)) return damaged("unreadable");
      checksum.update(block.data(), take);
      // The part of this block in the graph, then the part in the keys.
      const std::uint64_t graph_end = std::min<std::uint64_t>(at + take, trailer.graph_bytes);
      if (at < graph_end && !write_all(graph_file.fd(), block.data(), graph_end - at)) {
        return system_error(errno, path, "copy into memory the graph of");
      }
      const std::uint64_t keys_end = trailer.graph_bytes + key_count * 8;
      const std::uint64_t from = std::max(at, trailer.graph_bytes), to = std::min(at + take, keys_end);
      if (from < to) {
        std::memcpy(reinterpret_cast<char*>(keys.data()) + (from - trailer.graph_bytes), block.data() + (from - at),
                    to - from);
      }
      at += take;
    }
    if (checksum.value() != trailer.checksum) return damaged("checksum mismatch");
  }

  settings.connectivity = trailer.connectivity;  // fixed by the file
  settings.expansion_add = trailer.expansion_add;
  auto impl = std::make_unique<Impl>(dimension);
  try {
    impl->graph = std::make_unique<Graph>(&impl->space, graph_file.path(), /*nmslib=*/false, /*max_elements=*/0,
                                          /*allow_replace_deleted=*/true);
  } catch (const std::bad_alloc& thrown) {
    return error_from(thrown, "loading the vector index " + path.string());
  } catch (const std::exception& thrown) {
    return damaged(std::string("hnswlib cannot read its graph: ") + thrown.what());
  }
  const auto live_end = keys.begin() + static_cast<std::ptrdiff_t>(trailer.live_keys);
  impl->live.insert(keys.begin(), live_end);
  impl->removed.insert(live_end, keys.end());
  Graph& graph = *impl->graph;
  // The keys against the graph: as many nodes as live keys and removed ones at most, no removed key
  // live in the graph (getDataByLabel throws for a label that is marked deleted or absent), and, for
  // an index small enough to keep rows, every live key's vector read back.
  const auto live_in_graph = [&](std::int64_t key) {
    try {
      (void)graph.getDataByLabel<float>(label_of(key));
      return true;
    } catch (const std::runtime_error&) {
      return false;
    }
  };
  if (impl->live.size() != trailer.live_keys || impl->removed.size() != trailer.removed_keys ||
      graph.getCurrentElementCount() < impl->live.size() || impl->removed_nodes() > impl->removed.size() ||
      std::any_of(impl->removed.begin(), impl->removed.end(), live_in_graph)) {
    return damaged("its keys do not match its graph");
  }
  try {
    graph.setEf(settings.expansion_search);
    impl->keep_rows(settings.exact_search_below);
  } catch (const std::bad_alloc& thrown) {
    return error_from(thrown, "loading the vector index " + path.string());
  } catch (const std::exception&) {
    return damaged("its keys do not match its graph");
  }
  Loaded result;
  result.index.reset(new VectorIndex(std::move(impl), dimension, settings));
  result.log_position = trailer.log_position;
  return result;
}

Result<void> VectorIndex::add(std::int64_t key, std::span<const float> vector) {
  return add_many(std::span<const std::int64_t>(&key, 1), vector, 1);
}

Result<void> VectorIndex::add_many(std::span<const std::int64_t> keys, std::span<const float> vectors,
                                   std::size_t threads) {
  KOTAE_ASSERT(vectors.size() == keys.size() * dimension_);
  if (keys.empty()) return {};
  Impl& impl = *impl_;
  Graph& graph = *impl.graph;

  // Check every key before changing anything, so a refused batch leaves the index as it was.
  {
    std::unordered_set<std::int64_t> batch;
    for (const std::int64_t key : keys) {
      if (impl.live.contains(key) || !batch.insert(key).second) {
        return make_error(ErrorCode::invalid_argument,
                          "vector index: key " + std::to_string(key) + " is already in the index");
      }
    }
  }

  std::vector<char> added(keys.size(), 0);
  std::vector<Error> errors;
  std::mutex errors_mutex;
  // insert(i, normalised vector) for every i of `items`, on all threads (hnswlib locks per node and
  // per label).
  auto run = [&](const std::vector<std::size_t>& items, auto&& insert) {
    const std::size_t workers = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(items.size(), 1));
    auto work = [&](std::size_t worker) {
      std::vector<float> normalised(dimension_);
      try {
        for (std::size_t n = worker; n < items.size(); n += workers) {
          const std::size_t i = items[n];
          normalise(vectors.subspan(i * dimension_, dimension_), normalised.data());
          insert(i, normalised.data());
          added[i] = 1;
        }
      } catch (const std::exception& thrown) {
        std::lock_guard lock(errors_mutex);
        errors.push_back(error_from(thrown, "adding to the vector index"));
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t worker = 1; worker < workers; ++worker) pool.emplace_back(work, worker);
    work(0);
    for (auto& thread : pool) thread.join();
  };

  try {
    // A removed key takes its own node back when that is still in the graph (its vector and links are
    // updated); the other keys take any removed node (hnswlib's replace_deleted), else a new one. The
    // two kinds go one after the other, each on all threads.
    std::vector<std::size_t> returning, arriving;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (impl.removed.erase(keys[i]) > 0 && take_back(graph, keys[i])) {
        returning.push_back(i);
      } else {
        arriving.push_back(i);
      }
    }
    const std::size_t vacant = impl.removed_nodes() - returning.size();  // those are unmarked, not live yet
    impl.reserve_for(arriving.size() > vacant ? arriving.size() - vacant : 0);
    run(returning, [&](std::size_t i, const float* vector) { graph.addPoint(vector, label_of(keys[i])); });
    if (errors.empty()) {
      run(arriving, [&](std::size_t i, const float* vector) {
        graph.addPoint(vector, label_of(keys[i]), /*replace_deleted=*/true);
      });
    }

    const bool rows_before = impl.rows.has_value();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (added[i]) impl.live.insert(keys[i]);
    }
    impl.keep_rows(settings_.exact_search_below);
    if (rows_before && impl.rows) {  // still small: the new vectors join the rows
      std::vector<float> normalised(dimension_);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!added[i]) continue;
        normalise(vectors.subspan(i * dimension_, dimension_), normalised.data());
        impl.rows->add(keys[i], normalised.data(), dimension_);
      }
    }
    impl.forget_taken_keys();
  } catch (const std::exception& thrown) {
    errors.push_back(error_from(thrown, "adding to the vector index"));
  }
  if (!errors.empty()) return errors.front();
  return {};
}

bool VectorIndex::remove(std::int64_t key) {
  Impl& impl = *impl_;
  if (!impl.live.contains(key)) return false;
  try {
    impl.graph->markDelete(label_of(key));
  } catch (const std::exception&) {
    return false;  // hnswlib does not have it: never the case for a live key
  }
  impl.live.erase(key);
  impl.removed.insert(key);
  if (impl.rows) impl.rows->remove(key, dimension_);
  impl.keep_rows(settings_.exact_search_below);
  return true;
}

bool VectorIndex::contains(std::int64_t key) const {
  return impl_->live.contains(key);
}

std::size_t VectorIndex::size() const {
  return impl_->live.size();
}

std::vector<std::int64_t> VectorIndex::keys() const {
  return sorted(impl_->live);
}

bool VectorIndex::get(std::int64_t key, std::span<float> out) const {
  KOTAE_ASSERT(out.size() == dimension_);
  if (!impl_->live.contains(key)) return false;
  if (impl_->rows) {
    const float* vector = impl_->rows->vector(impl_->rows->row_of.at(key), dimension_);
    std::copy_n(vector, dimension_, out.begin());
    return true;
  }
  try {
    const auto vector = impl_->graph->getDataByLabel<float>(label_of(key));
    std::copy_n(vector.begin(), dimension_, out.begin());
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

Result<std::vector<Neighbour>> VectorIndex::search(std::span<const float> query, std::size_t k,
                                                   const Predicate* predicate) const {
  KOTAE_ASSERT(query.size() == dimension_);
  if (k == 0 || impl_->live.empty()) return std::vector<Neighbour>();
  std::vector<float> normalised(dimension_);
  normalise(query, normalised.data());
  try {
    if (impl_->rows) return impl_->compare_all(normalised.data(), k, predicate);  // below exact_search_below
    std::optional<AllowedKeys> filter;
    if (predicate != nullptr) filter.emplace(*predicate);
    auto found = impl_->graph->searchKnn(normalised.data(), k, filter ? &*filter : nullptr);
    std::vector<Neighbour> neighbours;
    neighbours.reserve(found.size());
    for (; !found.empty(); found.pop()) {
      neighbours.push_back({static_cast<std::int64_t>(found.top().second), 1.0f - found.top().first});
    }
    return most_similar_first(std::move(neighbours));
  } catch (const std::exception& thrown) {
    return error_from(thrown, "searching the vector index");
  }
}

Result<std::vector<Neighbour>> VectorIndex::search_exact(std::span<const float> query, std::size_t k) const {
  KOTAE_ASSERT(query.size() == dimension_);
  if (k == 0 || impl_->live.empty()) return std::vector<Neighbour>();
  std::vector<float> normalised(dimension_);
  normalise(query, normalised.data());
  try {
    return impl_->compare_all(normalised.data(), k, nullptr);
  } catch (const std::exception& thrown) {
    return error_from(thrown, "searching the vector index");
  }
}

void VectorIndex::set_expansion_search(std::size_t expansion) {
  settings_.expansion_search = expansion;
  impl_->graph->setEf(expansion);
}

void VectorIndex::set_exact_search_below(std::size_t count) {
  settings_.exact_search_below = count;
  impl_->keep_rows(count);
}

Result<void> VectorIndex::save(const std::filesystem::path& path, std::int64_t log_position) const {
  // The graph as hnswlib saves it, into memory; then the keys and the trailer after it, and the whole
  // written atomically.
  MemoryFile file;
  if (!file.ok()) return system_error(errno, path, "make a memory file to save");
  try {
    impl_->graph->saveIndex(file.path());
  } catch (const std::exception& thrown) {
    return error_from(thrown, "saving the vector index " + path.string());
  }
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) return system_error(errno, path, "stat the saved graph of");
  if (info.st_size <= 0) return make_error(ErrorCode::io, "hnswlib saved no graph for " + path.string());

  const std::vector<std::int64_t> live = sorted(impl_->live), removed = sorted(impl_->removed);
  Trailer trailer;
  trailer.dimension = static_cast<std::uint32_t>(dimension_);
  trailer.log_position = log_position;
  trailer.graph_bytes = static_cast<std::uint64_t>(info.st_size);
  trailer.live_keys = live.size();
  trailer.removed_keys = removed.size();
  trailer.connectivity = static_cast<std::uint32_t>(settings_.connectivity);
  trailer.expansion_add = static_cast<std::uint32_t>(settings_.expansion_add);
  const std::size_t total = trailer.graph_bytes + (live.size() + removed.size()) * 8 + sizeof trailer;
  if (::ftruncate(file.fd(), static_cast<off_t>(total)) != 0)
    return system_error(errno, path, "grow the saved graph of");
  Mapping whole(file.fd(), total);
  if (!whole.ok()) return system_error(errno, path, "map the saved graph of");
  char* keys_at = whole.data() + trailer.graph_bytes;
  std::memcpy(keys_at, live.data(), live.size() * 8);
  std::memcpy(keys_at + live.size() * 8, removed.data(), removed.size() * 8);
  char* trailer_at = whole.data() + total - sizeof trailer;
  std::memcpy(trailer_at, &trailer, sizeof trailer);
  Checksum checksum;
  checksum.update(whole.data(), total - sizeof trailer + kCheckedTrailerBytes);
  trailer.checksum = checksum.value();
  std::memcpy(trailer_at, &trailer, sizeof trailer);
  return write_file_atomically(path, std::string_view(whole.data(), total));
}

float cosine_similarity(std::span<const float> a, std::span<const float> b) {
  KOTAE_ASSERT(a.size() == b.size());
  double dot = 0, norm_a = 0, norm_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    norm_a += double(a[i]) * a[i];
    norm_b += double(b[i]) * b[i];
  }
  if (norm_a == 0 || norm_b == 0) return 0;
  return static_cast<float>(dot / std::sqrt(norm_a * norm_b));
}

}  // namespace kotae::store
