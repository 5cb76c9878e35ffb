#pragma once
// The SQLite back-end's kept document files (store/document_file_store.h): COLLECTION/uploads/NAME in
// the collection's folder, as the catalog names it. A path is one file name; anything else is refused.

#include "store/catalog.h"
#include "store/document_file_store.h"

namespace kotae::store {

class FolderDocumentFiles final : public DocumentFileStore {
 public:
  explicit FolderDocumentFiles(Catalog& catalog) : catalog_(catalog) {}

  Result<std::optional<std::string>> read(const std::string& tenant, const std::string& collection,
                                          const std::string& path) const override;
  Result<void> keep(const std::string& tenant, const std::string& collection, const std::string& path,
                    std::string_view bytes) const override;
  Result<void> forget(const std::string& tenant, const std::string& collection, const std::string& path) const override;

 private:
  Result<std::filesystem::path> file(const std::string& tenant, const std::string& collection,
                                     const std::string& path) const;
  Catalog& catalog_;
};

}  // namespace kotae::store
