#pragma once
// The search indexes a collection derives from its records, the same over either back-end: BM25 over
// the chunks' text (store/bm25_index), the HNSW graph over their embeddings (store/vector_index), and
// which document each chunk belongs to (for filters and results). They reflect the record store's
// change log up to position(): built from the records at open (the vectors loaded from a snapshot
// and caught up from the log when one fits), then moved forward by apply_write() for this process's
// own commits and by catch_up() for everyone else's.
//
// Searches run from many threads at once; apply_write() and catch_up() take the indexes alone while
// they change them. Callers keep catch_up(), apply_write(), save_snapshot() and rebuild_vectors() to
// one at a time (the collection's writer side).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/record_store.h"

namespace kotae::store {

// A document this process just committed, with everything the indexes need from it.
struct WrittenDocument {
  std::int64_t id = 0;
  std::string_view path;
  std::string_view format;
  std::span<const std::int64_t> chunk_ids;
  std::span<const ChunkRecord> chunks;
  std::span<const std::string> heading_paths;  // JSON text, as stored
  std::span<const float> embeddings;
  std::string_view metadata_json;  // as stored
};

class DerivedIndexes {
 public:
  // Builds the indexes from `store`; the vectors come from `snapshot` when it loads and the log
  // still reaches back to its position, else from every stored embedding (rebuilt_because() says why).
  static Result<std::unique_ptr<DerivedIndexes>> open(RecordStore& store, const std::filesystem::path& snapshot);
  ~DerivedIndexes();
  DerivedIndexes(const DerivedIndexes&) = delete;
  DerivedIndexes& operator=(const DerivedIndexes&) = delete;

  // Why the vectors were built from the records rather than loaded; empty when loaded (or empty).
  const std::string& rebuilt_because() const { return rebuilt_because_; }
  std::int64_t position() const;

  // Applies what other writers committed since position(). Cheap when the store says nothing changed.
  Result<void> catch_up(RecordStore& store);
  // Applies this process's own commit (which ended at change-log `position`): the removed document's
  // chunks leave, the added document's enter. Either may be absent.
  Result<void> apply_write(std::optional<std::int64_t> removed_document, const WrittenDocument* added,
                           std::int64_t position);
  // Applies this process's own change of a document's metadata (committed at change-log `position`):
  // its chunks stay as they are; only the document's metadata is new. (Another writer's such change
  // reaches catch_up() as every chunk of the document added again.)
  Result<void> apply_metadata(std::int64_t document_id, std::string_view metadata_json, std::int64_t position);

  Result<std::vector<ScoredChunk>> search_bm25(std::string_view query, std::size_t k, const SearchFilter& filter) const;
  Result<std::vector<ScoredChunk>> search_vector(std::span<const float> query, std::size_t k,
                                                 const SearchFilter& filter) const;
  Result<std::vector<ScoredChunk>> search_vector_exact(std::span<const float> query, std::size_t k) const;
  // invalid_argument naming the field when the filter's metadata part names a field no document has,
  // or compares one with a value of a type it does not hold (the searches check the same).
  Result<void> check_filter(const SearchFilter& filter) const;

  std::size_t chunk_count() const;
  std::size_t document_count() const;
  std::vector<std::int64_t> vector_keys() const;  // ascending

  // Writes the vector index with its position to `path` (atomically); the position saved, or
  // nullopt when the file already holds it.
  Result<std::optional<std::int64_t>> save_snapshot(const std::filesystem::path& path);
  // Builds the vectors again from the stored embeddings, beside the current ones (searches go on).
  Result<void> rebuild_vectors(RecordStore& store);

 private:
  struct State;
  explicit DerivedIndexes(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  std::string rebuilt_because_;
};

}  // namespace kotae::store
