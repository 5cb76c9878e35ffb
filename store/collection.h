#pragma once
// A collection: its records in a record store (store/record_store.h: a SQLite file beside this
// process, or PostgreSQL shared by several replicas), the source of truth, and the search indexes
// derived from them in memory (store/derived_indexes.h: BM25, the HNSW graph, which chunk is in which
// document), with a snapshot of the vectors on disk so an open need not rebuild them.
//
// One writer at a time in this process; searches run concurrently with each other and with the
// writer. Others may write the same records (the CLI beside a server, another replica): every write
// first catches the indexes up with their commits, and so does every search where the store can tell
// cheaply (SQLite); where it cannot (PostgreSQL), whoever follows the store's notifications calls
// catch_up().
//
//   DIR/kotae.db, DIR/manifest.json   the SQLite back-end (store/sqlite_record_store.h)
//   DIR/vectors.index                 the vector snapshot, with the change-log position it reflects

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
#include "store/records.h"
#include "store/sentence_vectors.h"

namespace kotae::store {

class Collection {
 public:
  // Opens DIR, creating it with `info` when it does not exist. An existing collection whose
  // embedder_id or dimension differ from `info` is an invalid_argument error naming both.
  static Result<std::unique_ptr<Collection>> open_or_create(const std::filesystem::path& dir,
                                                            const CollectionInfo& info);
  // Opens an existing collection (not_found when there is none).
  static Result<std::unique_ptr<Collection>> open(const std::filesystem::path& dir);
  // Over records kept elsewhere, with the vector snapshot at `snapshot`.
  static Result<std::unique_ptr<Collection>> open(std::unique_ptr<RecordStore> records,
                                                  const std::filesystem::path& snapshot);

  ~Collection();
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  const CollectionInfo& info() const;
  // Why opening rebuilt the vector index from the database (missing, damaged, stale); empty when it
  // was loaded. Callers log it: a rebuild is safe but slow, and someone should know it happened.
  const std::string& vector_index_rebuilt_because() const;
  const std::filesystem::path& dir() const;  // the folder of a SQLite collection; empty otherwise
  const std::string& location() const;       // where the records are, for messages

  // Brings the search indexes up to what others committed (cheap when nothing changed).
  Result<void> catch_up();
  // What every search does first: catch_up() where the store can tell cheaply that others committed
  // (SQLite), and unless this process is writing. A reader that names what it reads (a cache scope)
  // calls it before change_position().
  Result<void> catch_up_before_reading() const;
  // The change-log position the search indexes reflect.
  std::int64_t change_position() const;

  // The stored record (without text) for a path, or nullopt.
  Result<std::optional<DocumentRecord>> find_document(std::string_view path) const;
  // With its text.
  Result<std::optional<DocumentRecord>> document(std::int64_t id) const;
  Result<std::vector<DocumentRecord>> documents() const;
  // Records without text for the given ids, in the order asked (search results name their documents).
  Result<std::vector<DocumentRecord>> documents(std::span<const std::int64_t> ids) const;

  // Stores a document and its chunks (ids ignored; embeddings row-major, dimension() floats per
  // chunk; sentences: none, or one list per chunk), replacing any document with the same path, in one
  // transaction: after a crash either the old or the new version is there, never a mix. Returns the
  // new document id.
  Result<std::int64_t> put_document(const DocumentRecord& document, std::span<const ChunkRecord> chunks,
                                    std::span<const float> embeddings,
                                    std::span<const std::vector<SentenceVector>> sentences = {});
  // Removes a document, its chunks, their FTS rows and vectors. false when there was none.
  Result<bool> remove_document(std::string_view path);
  // Replaces the metadata of document `id` (a JSON object's text, stored as it is) in one transaction;
  // false when there is no such document. The change-log position moves on (cached answers keyed by it
  // are stale), this process's indexes hear of it (DerivedIndexes::apply_metadata) and others' from
  // the change log, as a re-ingest of the document's chunks.
  Result<bool> update_document_metadata(std::int64_t id, std::string_view metadata_json);

  // In the order asked; ids that no longer exist (removed since the search that named them) are
  // left out.
  Result<std::vector<ChunkRecord>> chunks(std::span<const std::int64_t> ids) const;
  Result<std::vector<ChunkRecord>> document_chunks(std::int64_t document_id) const;
  // Stored embeddings of the given chunks, row-major, in the order asked (benchmarks, exports).
  Result<std::vector<float>> embeddings(std::span<const std::int64_t> chunk_ids) const;
  // Each chunk's sentences with their vectors, in the order asked; an empty list for a chunk stored
  // without them. Ids that no longer exist are not_found.
  Result<std::vector<std::vector<SentenceVector>>> chunk_sentences(std::span<const std::int64_t> chunk_ids) const;
  std::size_t chunk_count() const;
  std::size_t document_count() const;

  // BM25 over chunk text (and heading path, weight 0.5), best first. Words of the query are matched
  // with OR, English stop words dropped unless nothing else is left; any syntax is plain words.
  Result<std::vector<ScoredChunk>> search_bm25(std::string_view query, std::size_t k,
                                               const SearchFilter& filter = {}) const;
  // Approximate nearest neighbours by cosine similarity, best first.
  Result<std::vector<ScoredChunk>> search_vector(std::span<const float> query, std::size_t k,
                                                 const SearchFilter& filter = {}) const;
  // invalid_argument naming the field when `filter.where` names a field no document has, or compares
  // one with a value of a type it does not hold (the searches say the same; callers that answer with
  // another error code ask first).
  Result<void> check_filter(const SearchFilter& filter) const;
  // Exact search (every stored vector): the reference for the index's recall.
  Result<std::vector<ScoredChunk>> search_vector_exact(std::span<const float> query, std::size_t k) const;

  // Writes the vector index file (atomically: temp file, fsync, rename) and trims the change log.
  Result<void> save_vector_index();
  // Drops the vector index and builds it again from the stored embeddings.
  Result<void> rebuild_vector_index();
  // Integrity of the database and agreement between chunks and the vector index.
  Result<ConsistencyReport> check() const;

 private:
  struct State;
  explicit Collection(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kotae::store
