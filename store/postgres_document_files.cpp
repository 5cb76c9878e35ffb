#include "store/postgres_document_files.h"

#include <span>

namespace kotae::store {

const SchemaSteps& postgres_document_files_schema() {
  // Version 1: the uploaded files of a collection's documents, gone with their collection.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS document_files(
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  path text NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (collection_id, path));
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"document_files", kSteps};
  return schema;
}

Result<std::optional<std::string>> PostgresDocumentFiles::read(const std::string& tenant, const std::string& collection,
                                                               const std::string& path) const {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->query("SELECT f.bytes FROM document_files f JOIN collections k ON k.id = f.collection_id "
                                   "WHERE k.tenant = $1 AND k.name = $2 AND f.path = $3",
                                   PgParams().add(tenant).add(collection).add(path)));
  if (rows.rows() == 0) return std::optional<std::string>();
  const auto bytes = rows.bytes(0, 0);
  return std::optional<std::string>(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Result<void> PostgresDocumentFiles::keep(const std::string& tenant, const std::string& collection,
                                         const std::string& path, std::string_view bytes) const {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(
      "INSERT INTO document_files(collection_id, path, bytes) SELECT k.id, $3, $4 FROM collections k "
      "WHERE k.tenant = $1 AND k.name = $2 ON CONFLICT (collection_id, path) DO UPDATE SET bytes = excluded.bytes",
      PgParams()
          .add(tenant)
          .add(collection)
          .add(path)
          .add_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())))));
  return {};
}

Result<void> PostgresDocumentFiles::forget(const std::string& tenant, const std::string& collection,
                                           const std::string& path) const {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(
      lease->query("DELETE FROM document_files f USING collections k WHERE k.id = f.collection_id AND k.tenant = $1 "
                   "AND k.name = $2 AND f.path = $3",
                   PgParams().add(tenant).add(collection).add(path)));
  return {};
}

}  // namespace kotae::store
