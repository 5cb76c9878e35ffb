#pragma once
// The shared back-end: the records of every collection in one PostgreSQL database, so several
// `kotae serve` replicas (and `kotae index`) work on the same collections. Plain tables, no extension:
// embeddings are bytea columns and every search runs on the derived indexes in each replica's memory.
//
// Writes to one collection take turns (a transaction-scoped advisory lock on the collection), so the
// change log's sequence grows in commit order within a collection and a follower that has read up to
// a position has missed nothing before it. Each commit notifies channel `kotae_changes` with
// "COLLECTION_ID POSITION"; replicas LISTEN to it (store/change_follower.h).

#include <memory>
#include <string>

#include "store/postgres_connection.h"
#include "store/postgres_schema.h"
#include "store/record_store.h"

namespace kotae::store {

inline constexpr const char* kChangeChannel = "kotae_changes";

// The tables of collections, documents, chunks and the change log (store/postgres_schema.h).
const SchemaSteps& postgres_records_schema();

class PostgresRecordStore final : public RecordStore {
 public:
  // The collection (tenant, name) in the database `pool` connects to; created with `create_with`
  // when missing (null: not_found). Another embedder or dimension than `create_with`'s is
  // invalid_argument.
  static Result<std::unique_ptr<PostgresRecordStore>> open(const std::shared_ptr<PgPool>& pool,
                                                           const std::string& tenant, const std::string& name,
                                                           const CollectionInfo* create_with);
  ~PostgresRecordStore() override;

  std::int64_t collection_id() const;

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

  Result<bool> changed_elsewhere() override { return true; }
  bool check_before_each_search() const override { return false; }
  Result<std::int64_t> last_change() override;
  Result<std::optional<std::vector<std::int64_t>>> chunks_changed(std::int64_t after, std::int64_t through) override;
  Result<std::int64_t> log_trimmed_through() override { return std::int64_t{0}; }  // kept for every replica
  Result<void> snapshot_saved(std::int64_t) override { return {}; }
  Result<std::vector<std::int64_t>> chunk_ids() override;
  Result<void> scan_documents(const std::function<void(IndexedDocument)>& visit) override;
  Result<void> scan_chunks(bool with_embeddings, const ChunkVisitor& visit) override;
  Result<void> read_chunks(std::span<const std::int64_t> ids, const ChunkVisitor& visit) override;

  Result<std::unique_ptr<WriteTransaction>> begin_write() override;
  Result<RecordCheck> check_records() override;

 private:
  struct State;
  explicit PostgresRecordStore(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kotae::store
