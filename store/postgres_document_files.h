#pragma once
// Over a shared store, the uploaded originals of a collection's documents (table `document_files`), kept
// by whichever replica or worker indexed them so that every replica can show them. Keyed by tenant,
// collection and the document's path (an upload's file name); gone with their collection.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const PgSchema& postgres_document_files_schema();

class PostgresDocumentFiles {
 public:
  explicit PostgresDocumentFiles(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  // The kept bytes, or nullopt when none are kept under that path.
  Result<std::optional<std::string>> read(const std::string& tenant, const std::string& collection,
                                          const std::string& path) const;
  // Keeps (or replaces) the bytes under that path.
  Result<void> keep(const std::string& tenant, const std::string& collection, const std::string& path,
                    std::string_view bytes) const;
  Result<void> forget(const std::string& tenant, const std::string& collection, const std::string& path) const;

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
