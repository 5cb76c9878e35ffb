#pragma once
// Where a collection's records live: the source of truth that the search indexes are derived from.
// Two back-ends implement it: SQLite, a file beside one process (store/sqlite_record_store), and
// PostgreSQL, shared by several replicas (store/postgres_record_store). Both keep a change log, a
// sequence that only grows, with one entry per chunk added or removed, written in the same
// transaction as the change; store/derived_indexes follows it.
//
// Reads may come from any thread. The change log and writes are the collection's writer side: one
// caller at a time (Collection holds its writer mutex around them).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "store/records.h"
#include "store/sentence_vectors.h"

namespace kotae::store {

// A chunk as the derived indexes read it. `embedding` is empty unless asked for, and valid only
// during the visitor's call.
struct IndexedChunk {
  std::int64_t id = 0;
  std::int64_t document_id = 0;
  std::string_view text;
  std::string_view heading_path;  // as stored: its JSON text, which BM25 indexes as FTS5 does
  std::string_view document_path;
  std::string_view document_format;
  std::span<const float> embedding;
};
using ChunkVisitor = std::function<Result<void>(const IndexedChunk&)>;

struct IndexedDocument {
  std::int64_t id = 0;
  std::string path;
  std::string format;
  std::string metadata_json;  // as stored (metadata filters read it)
};

// What check() learns from the records alone.
struct RecordCheck {
  bool integrity_ok = true;  // the engine's own integrity check (SQLite: PRAGMA integrity_check)
  bool fts_ok = true;        // the full-text table agrees with the chunks (SQLite's FTS5; none elsewhere)
  std::size_t documents = 0;
  std::vector<std::int64_t> chunk_ids;  // ascending
  std::vector<std::string> problems;
};

// A chunk's heading path as stored, and as BM25 indexes it: its JSON text (invalid UTF-8 replaced).
std::string heading_path_json(const std::vector<std::string>& heading_path);

// One write: rolled back when destroyed uncommitted. Every change it makes is in the change log.
class WriteTransaction {
 public:
  virtual ~WriteTransaction() = default;
  // Removes the document stored under `path` and its chunks; its id, or nullopt when there was none.
  virtual Result<std::optional<std::int64_t>> remove_document(std::string_view path) = 0;
  // Stores a document (its id is assigned) and returns the id.
  virtual Result<std::int64_t> insert_document(const DocumentRecord& document, std::size_t chunk_count) = 0;
  // Stores its chunks in order: heading_paths[i] is chunk i's heading path as JSON text, embeddings
  // dimension floats per chunk, sentences empty or one encoded list per chunk. Returns their ids.
  virtual Result<std::vector<std::int64_t>> insert_chunks(std::int64_t document_id, std::span<const ChunkRecord> chunks,
                                                          std::span<const std::string> heading_paths,
                                                          std::span<const float> embeddings,
                                                          std::span<const std::vector<std::byte>> sentences) = 0;
  // Replaces the metadata of document `id` (a JSON object's text); false when there is no such
  // document. Its chunks do not change, but each is logged as added again, so whoever follows the
  // change log (another process's or replica's derived indexes, DerivedIndexes::catch_up) reads the
  // document and its chunks anew, as after a re-ingest.
  virtual Result<bool> update_document_metadata(std::int64_t id, std::string_view metadata_json) = 0;
  // Commits; returns the change-log position that includes this transaction's changes.
  virtual Result<std::int64_t> commit() = 0;
};

class RecordStore {
 public:
  virtual ~RecordStore() = default;

  virtual const CollectionInfo& info() const = 0;
  // Where the records are, for messages ("DIR/kotae.db", "collection NAME in postgres DB").
  virtual const std::string& location() const = 0;

  // --- records (any thread) ---
  virtual Result<std::optional<DocumentRecord>> find_document(std::string_view path) = 0;  // without text
  virtual Result<std::optional<DocumentRecord>> document(std::int64_t id) = 0;             // with text
  virtual Result<std::vector<DocumentRecord>> documents() = 0;                             // by path, without text
  virtual Result<std::unordered_map<std::int64_t, DocumentRecord>> documents_by_id(
      std::span<const std::int64_t> ids) = 0;
  virtual Result<std::unordered_map<std::int64_t, ChunkRecord>> chunks_by_id(std::span<const std::int64_t> ids) = 0;
  virtual Result<std::vector<ChunkRecord>> document_chunks(std::int64_t document_id) = 0;  // by ordinal
  // Row-major, in the order asked; a missing id is not_found.
  virtual Result<std::vector<float>> embeddings(std::span<const std::int64_t> chunk_ids) = 0;
  virtual Result<std::vector<std::vector<SentenceVector>>> chunk_sentences(std::span<const std::int64_t> chunk_ids) = 0;

  // --- the change log and what the indexes are built from (the writer side) ---
  // False only when nobody else can have committed since the last call (SQLite's data_version);
  // a back-end that cannot tell cheaply says true.
  virtual Result<bool> changed_elsewhere() = 0;
  // Whether a search should ask changed_elsewhere() first: true where that is a cheap local check
  // (SQLite); false where the collection is told of changes instead (PostgreSQL's notifications).
  virtual bool check_before_each_search() const = 0;
  virtual Result<std::int64_t> last_change() = 0;
  // The chunks touched by changes in (after, through], or nullopt when the log no longer reaches
  // back to `after` (trimmed once a snapshot covered it).
  virtual Result<std::optional<std::vector<std::int64_t>>> chunks_changed(std::int64_t after, std::int64_t through) = 0;
  // The oldest position a snapshot may reflect and still be caught up from the log.
  virtual Result<std::int64_t> log_trimmed_through() = 0;
  // A snapshot of the indexes at `position` was saved: a store with one snapshot trims the log
  // (SQLite); a shared one keeps it for the other replicas.
  virtual Result<void> snapshot_saved(std::int64_t position) = 0;
  virtual Result<std::vector<std::int64_t>> chunk_ids() = 0;  // ascending
  virtual Result<void> scan_documents(const std::function<void(IndexedDocument)>& visit) = 0;
  // Every chunk, in document and ordinal order.
  virtual Result<void> scan_chunks(bool with_embeddings, const ChunkVisitor& visit) = 0;
  // The given chunks that still exist (in no particular order), with embeddings.
  virtual Result<void> read_chunks(std::span<const std::int64_t> ids, const ChunkVisitor& visit) = 0;

  // --- writes ---
  virtual Result<std::unique_ptr<WriteTransaction>> begin_write() = 0;

  virtual Result<RecordCheck> check_records() = 0;
};

}  // namespace kotae::store
