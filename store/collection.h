#pragma once
// A collection: one folder holding a SQLite database (documents, chunks with their embeddings, an
// FTS5 full-text index) and a vector index over the chunks' embeddings. SQLite is the source of truth;
// the vector index is a cache of it that is caught up from a change log at open, and rebuilt from the
// stored embeddings when missing or damaged. BM25 is answered from an in-memory index built at open
// with FTS5's own terms and weights (FTS5 scores every matching row; this prunes to touched slots).
// One writer at a time; searches may run concurrently with each other (BM25 and vector search on
// different threads) and with a writer. Another process may write the same folder (the CLI beside a
// server; store/writer_lock.h keeps them in turn): every write and search first catches the in-memory
// indexes up with what it committed.
//
//   DIR/kotae.db        documents, chunks, chunks_fts, vector_log, meta (WAL mode)
//   DIR/vectors.index   the vector index, with the change-log position it reflects
//   DIR/manifest.json   CollectionInfo, for people and tools (the database holds the same)

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
#include "store/sentence_vectors.h"

namespace kotae::store {

// What built the collection. Opening it with another embedder or dimension is an error.
struct CollectionInfo {
  std::string embedder_id;  // Encoder::id(), e.g. "all-minilm-l6-v2/fp32"
  std::size_t dimension = 0;
  std::size_t chunk_tokens = 0;  // chunking settings, recorded for reproducibility
  std::size_t overlap_tokens = 0;
};

struct DocumentRecord {
  std::int64_t id = 0;  // assigned by the store
  std::string path;     // the document's identity in the collection: absolute path, or a name
  std::string sha256;   // of the file's bytes (hex)
  std::int64_t size = 0;
  std::int64_t modified_ns = 0;  // file mtime, nanoseconds since the epoch
  std::string title;
  std::string format;  // "txt", "md", "html", "pdf", "docx"
  std::string metadata_json = "{}";
  std::string text;    // the normalised text chunks point into (filled by document(), not documents())
  std::int64_t chunk_count = 0;
};

struct ChunkRecord {
  std::int64_t id = 0;  // assigned by the store; also the chunk's key in the vector index
  std::int64_t document_id = 0;
  std::uint32_t ordinal = 0;  // position in its document
  std::size_t begin = 0;      // byte span in the document's text
  std::size_t end = 0;
  std::uint32_t page_first = 0;
  std::uint32_t page_last = 0;
  std::vector<std::string> heading_path;
  std::size_t token_count = 0;
  std::string text;  // document.text.substr(begin, end - begin)
};

// Restricts a search to documents whose path starts with `path_prefix` (when not empty) and whose
// format is one of `formats` (when not empty).
struct SearchFilter {
  std::string path_prefix;
  std::vector<std::string> formats;
  bool empty() const { return path_prefix.empty() && formats.empty(); }
};

struct ScoredChunk {
  std::int64_t chunk_id = 0;
  std::int64_t document_id = 0;
  float score = 0;  // BM25 (store/bm25_index, the same terms and weights as chunks_fts); vector: cosine similarity
};

struct ConsistencyReport {
  bool integrity_ok = false;        // PRAGMA integrity_check said "ok"
  bool fts_ok = false;              // FTS5 'integrity-check' passed
  std::size_t documents = 0;
  std::size_t chunks = 0;           // rows in chunks
  std::size_t vectors = 0;          // keys in the vector index
  std::size_t chunks_without_vector = 0;
  std::size_t vectors_without_chunk = 0;
  std::string details;              // what failed, for the error message
  bool ok() const {
    return integrity_ok && fts_ok && chunks == vectors && chunks_without_vector == 0 && vectors_without_chunk == 0;
  }
};

class Collection {
 public:
  // Opens DIR, creating it with `info` when it does not exist. An existing collection whose
  // embedder_id or dimension differ from `info` is an invalid_argument error naming both.
  static Result<std::unique_ptr<Collection>> open_or_create(const std::filesystem::path& dir,
                                                            const CollectionInfo& info);
  // Opens an existing collection (not_found when there is none).
  static Result<std::unique_ptr<Collection>> open(const std::filesystem::path& dir);

  ~Collection();
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  const CollectionInfo& info() const;
  // Why opening rebuilt the vector index from the database (missing, damaged, stale); empty when it
  // was loaded. Callers log it: a rebuild is safe but slow, and someone should know it happened.
  const std::string& vector_index_rebuilt_because() const;
  const std::filesystem::path& dir() const;

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
