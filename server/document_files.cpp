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

}  // namespace

fs::path kept_upload(const ServedCollection& collection, const std::string& name) { return collection.folder / "uploads" / name; }

Result<OriginalFile> original_file(const ServedCollection& collection, const store::DocumentRecord& document) {
  fs::path path;
  if (uploaded(document)) {
    if (!plain_name(document.path)) return OriginalFile{{}, "the upload's name is not a file name"};
    path = kept_upload(collection, document.path);
  } else if (fs::path(document.path).is_absolute()) {
    path = document.path;  // indexed from disk by the CLI; shown while this server can read it
  } else {
    return OriginalFile{{}, "the document was not uploaded as a file"};
  }
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || !fs::is_regular_file(path, ec)) return OriginalFile{{}, "the file is not readable by the server"};
  if (size > kMaxServedFileBytes) {
    return OriginalFile{{}, "the file has " + std::to_string(size) + " bytes; the most shown is " + std::to_string(kMaxServedFileBytes)};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return OriginalFile{{}, "the file could not be read"};
  auto read = std::move(bytes).str();
  if (sha256_hex(read) != document.sha256) return OriginalFile{{}, "the file changed since it was indexed"};
  return OriginalFile{std::move(read), {}};
}

std::string inline_content_type(std::string_view format) {
  if (format == "pdf") return "application/pdf";
  if (format == "txt" || format == "md") return "text/plain; charset=utf-8";
  return "";  // HTML and DOCX are never rendered from this origin
}

}  // namespace kotae::server
