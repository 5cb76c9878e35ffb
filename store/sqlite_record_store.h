#pragma once
// The embedded back-end: a collection's records in one SQLite file (WAL, synchronous=FULL) beside
// one process, with FTS5 over the chunks for check() and the change log in `vector_log`, filled by
// triggers. One writer connection (the writer side, and the change log) and a pool of readers.
//
//   DIR/kotae.db        documents, chunks, chunks_fts, vector_log, meta
//   DIR/manifest.json   CollectionInfo, for people and tools (the database holds the same)

#include <filesystem>
#include <memory>

#include "store/record_store.h"

namespace kotae::store {

class SqliteRecordStore final : public RecordStore {
 public:
  // Opens DIR/kotae.db; creates it with `create_with` when missing (null: not_found). An existing
  // collection whose embedder or dimension differ from `create_with` is invalid_argument.
  static Result<std::unique_ptr<SqliteRecordStore>> open(const std::filesystem::path& dir,
                                                         const CollectionInfo* create_with);
  ~SqliteRecordStore() override;

  const CollectionInfo& info() const override;
  const std::string& location() const override;

  Result<std::optional<DocumentRecord>> find_document(std::string_view path) override;
  Result<std::optional<DocumentRecord>> document(std::int64_t id) override;
  Result<std::vector<DocumentRecord>> documents() override;
  Result<std::unordered_map<std::int64_t, DocumentRecord>> documents_by_id(std::span<const std::int64_t> ids) override;
  Result<std::unordered_map<std::int64_t, ChunkRecord>> chunks_by_id(std::span<const std::int64_t> ids) override;
  Result<std::vector<ChunkRecord>> document_chunks(std::int64_t document_id) override;
  Result<std::vector<float>> embeddings(std::span<const std::int64_t> chunk_ids) override;
  Result<std::vector<std::vector<SentenceVector>>> chunk_sentences(std::span<const std::int64_t> chunk_ids) override;

  Result<bool> changed_elsewhere() override;
  bool check_before_each_search() const override { return true; }
  Result<std::int64_t> last_change() override;
  Result<std::optional<std::vector<std::int64_t>>> chunks_changed(std::int64_t after, std::int64_t through) override;
  Result<std::int64_t> log_trimmed_through() override;
  Result<void> snapshot_saved(std::int64_t position) override;
  Result<std::vector<std::int64_t>> chunk_ids() override;
  Result<void> scan_documents(const std::function<void(IndexedDocument)>& visit) override;
  Result<void> scan_chunks(bool with_embeddings, const ChunkVisitor& visit) override;
  Result<void> read_chunks(std::span<const std::int64_t> ids, const ChunkVisitor& visit) override;

  Result<std::unique_ptr<WriteTransaction>> begin_write() override;
  Result<RecordCheck> check_records() override;

 private:
  struct State;
  explicit SqliteRecordStore(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kotae::store
