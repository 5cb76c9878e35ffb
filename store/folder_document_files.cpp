#include "store/folder_document_files.h"

#include <fstream>
#include <iterator>

#include "store/atomic_file.h"

namespace kotae::store {

namespace fs = std::filesystem;

Result<fs::path> FolderDocumentFiles::file(const std::string& tenant, const std::string& collection,
                                           const std::string& path) const {
  const fs::path name(path);
  if (path.empty() || name.filename() != name || path == "." || path == "..") {
    return make_error(ErrorCode::invalid_argument, "'" + path + "' is not an upload's file name");
  }
  return KOTAE_TRY_VALUE(catalog_.folder(tenant, collection)) / "uploads" / name;
}

Result<std::optional<std::string>> FolderDocumentFiles::read(const std::string& tenant, const std::string& collection,
                                                             const std::string& path) const {
  const fs::path kept = KOTAE_TRY_VALUE(file(tenant, collection, path));
  std::error_code ec;
  if (!fs::is_regular_file(kept, ec)) return std::optional<std::string>();
  std::ifstream in(kept, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return make_error(ErrorCode::io, "cannot read " + kept.string());
  return std::optional<std::string>(std::move(bytes));
}

Result<void> FolderDocumentFiles::keep(const std::string& tenant, const std::string& collection,
                                       const std::string& path, std::string_view bytes) const {
  const fs::path kept = KOTAE_TRY_VALUE(file(tenant, collection, path));
  std::error_code ec;
  fs::create_directories(kept.parent_path(), ec);
  if (ec) return make_error(ErrorCode::io, "cannot create " + kept.parent_path().string() + ": " + ec.message());
  return write_file_atomically(kept, bytes);
}

Result<void> FolderDocumentFiles::forget(const std::string& tenant, const std::string& collection,
                                         const std::string& path) const {
  const fs::path kept = KOTAE_TRY_VALUE(file(tenant, collection, path));
  std::error_code ec;
  fs::remove(kept, ec);
  if (ec) return make_error(ErrorCode::io, "cannot remove " + kept.string() + ": " + ec.message());
  return {};
}

}  // namespace kotae::store
