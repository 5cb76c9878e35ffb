#pragma once
// Over a shared store, the uploaded originals of a collection's documents (table `document_files`), kept
// by whichever replica or worker indexed them so that every replica can show them. Keyed by tenant,
// collection and the document's path (an upload's file name); gone with their collection.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "store/document_file_store.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_document_files_schema();

class PostgresDocumentFiles final : public DocumentFileStore {
 public:
  explicit PostgresDocumentFiles(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  Result<std::optional<std::string>> read(const std::string& tenant, const std::string& collection,
                                          const std::string& path) const override;
  Result<void> keep(const std::string& tenant, const std::string& collection, const std::string& path,
                    std::string_view bytes) const override;
  Result<void> forget(const std::string& tenant, const std::string& collection, const std::string& path) const override;

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
