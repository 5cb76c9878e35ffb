#pragma once
// Where an upload's original file is kept once indexed, so that the server can show the document a
// citation points into. Keyed by tenant, collection and the document's path (its upload name); gone
// with its collection. SQLite: the collection's own folder, COLLECTION/uploads/NAME, beside its
// database, so the collection stays one folder that is copied, measured and deleted whole
// (store/folder_document_files.h); PostgreSQL: table `document_files`, for every replica
// (store/postgres_document_files.h).

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace kotae::store {

class DocumentFileStore {
 public:
  virtual ~DocumentFileStore() = default;
  // The kept bytes, or nullopt when none are kept under that path.
  virtual Result<std::optional<std::string>> read(const std::string& tenant, const std::string& collection,
                                                  const std::string& path) const = 0;
  // Keeps (or replaces) the bytes under that path.
  virtual Result<void> keep(const std::string& tenant, const std::string& collection, const std::string& path,
                            std::string_view bytes) const = 0;
  // Forgets them; none kept is no error.
  virtual Result<void> forget(const std::string& tenant, const std::string& collection,
                              const std::string& path) const = 0;
};

}  // namespace kotae::store
