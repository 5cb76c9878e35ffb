#include "server/document_files.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/sha256.h"

namespace kotae::server {

namespace fs = std::filesystem;

namespace {

bool uploaded(const store::DocumentRecord& d) {
  const auto metadata = nlohmann::json::parse(d.metadata_json, nullptr, false, true);
  return metadata.is_object() && metadata.value("source", "") == "upload";
}

// An upload's name is one path segment; anything else never named a kept copy.
bool plain_name(const std::string& name) {
  const fs::path p(name);
  return !name.empty() && p.filename() == p && name != "." && name != "..";
}

fs::path kept_upload(const assembly::ServedCollection& collection, const std::string& name) {
  return collection.folder / "uploads" / name;
}

OriginalFile missing(std::string why) {
  return {std::nullopt, std::move(why)};
}

OriginalFile read_disk(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || !fs::is_regular_file(path, ec)) return missing("the file is not readable by the server");
  if (size > kMaxServedFileBytes) {
    return missing("the file has " + std::to_string(size) + " bytes; the most shown is " +
                   std::to_string(kMaxServedFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return missing("the file could not be read");
  return {std::move(bytes).str(), {}};
}

}  // namespace

Result<OriginalFile> DocumentFiles::read(const assembly::ServedCollection& collection,
                                         const store::DocumentRecord& document) const {
  OriginalFile file;
  if (uploaded(document)) {
    if (!plain_name(document.path)) return missing("the upload's name is not a file name");
    if (auto kept = KOTAE_TRY_VALUE(kept_->read(collection.tenant, collection.name, document.path))) {
      file.bytes = std::move(*kept);
    } else {
      file = read_disk(kept_upload(collection, document.path));  // indexed by this replica itself, before 0.2
    }
  } else if (fs::path(document.path).is_absolute()) {
    file = read_disk(document.path);  // indexed from disk by the CLI; shown while this server can read it
  } else {
    return missing("the document was not uploaded as a file");
  }
  if (file.bytes && file.bytes->size() > kMaxServedFileBytes) {
    return missing("the file has " + std::to_string(file.bytes->size()) + " bytes; the most shown is " +
                   std::to_string(kMaxServedFileBytes));
  }
  if (file.bytes && sha256_hex(*file.bytes) != document.sha256) return missing("the file changed since it was indexed");
  return file;
}

Result<void> DocumentFiles::keep(const assembly::ServedCollection& collection, const std::string& name,
                                 const fs::path& path) const {
  auto file = read_disk(path);
  if (!file.bytes) return make_error(ErrorCode::io, file.missing_because);
  return kept_->keep(collection.tenant, collection.name, name, *file.bytes);
}

Result<void> DocumentFiles::forget(const assembly::ServedCollection& collection,
                                   const store::DocumentRecord& document) const {
  if (!uploaded(document) || !plain_name(document.path)) return {};
  std::error_code ignored;  // one never kept here is no error
  fs::remove(kept_upload(collection, document.path), ignored);
  return kept_->forget(collection.tenant, collection.name, document.path);
}

std::string inline_content_type(std::string_view format) {
  if (format == "pdf") return "application/pdf";
  if (format == "png") return "image/png";  // images of scans, shown with their OCR'd lines' boxes
  if (format == "jpg") return "image/jpeg";
  if (format == "webp") return "image/webp";
  if (format == "txt" || format == "md") return "text/plain; charset=utf-8";
  return "";  // HTML, DOCX and TIFF (which browsers do not draw) are never rendered from this origin
}

}  // namespace kotae::server
