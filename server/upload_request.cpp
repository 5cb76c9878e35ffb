#include "server/upload_request.h"

#include <map>
#include <optional>
#include <unordered_set>

#include "server/api_error.h"
#include "server/multipart.h"
#include "text/document_metadata.h"
#include "text/loaders/loader.h"

namespace kotae::server {
namespace {

nlohmann::json checked_metadata(std::string_view text, const std::string& what) {
  auto metadata = text::parse_metadata(text, what);
  if (!metadata) throw bad_request(metadata.error().message);
  return std::move(*metadata);
}

std::string compact(const nlohmann::json& metadata) {
  return metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Upload read_upload(const HttpRequest& request) {
  const auto boundary = multipart_boundary(request.header("content-type"));
  if (!boundary) {
    throw ApiError{415, "unsupported_media_type", "upload files as multipart/form-data (curl -F files=@report.pdf)"};
  }
  auto parts = parse_multipart(request.body, *boundary);
  if (!parts) throw from_error(parts.error());
  Upload upload;
  std::optional<nlohmann::json> shared;
  std::map<std::string, nlohmann::json> own;  // metadata[NAME] by NAME
  std::size_t metadata_bytes = 0;
  std::unordered_set<std::string> names;  // a repeated name is found in one pass, however many files
  for (const auto& part : *parts) {
    const bool for_all = part.name == "metadata";
    const bool for_one = part.name.starts_with("metadata[") && part.name.ends_with("]");
    if (for_all || for_one) {  // metadata, even when sent as a file (curl -F metadata=@meta.json)
      metadata_bytes += part.body.size();
      if (metadata_bytes > kMaxUploadMetadataBytes) {
        throw bad_request("the form's metadata fields come to over " + std::to_string(kMaxUploadMetadataBytes) +
                          " bytes: send fewer files per upload");
      }
      if (for_all) {
        if (shared) throw bad_request("'metadata' is given twice");
        shared = checked_metadata(part.body, "metadata");
        continue;
      }
      const std::string file = part.name.substr(9, part.name.size() - 10);
      if (own.contains(file)) throw bad_request("'" + part.name + "' is given twice");
      own.emplace(file, checked_metadata(part.body, part.name));
      continue;
    }
    if (part.filename.empty()) continue;  // a plain form field
    auto name = safe_filename(part.filename);
    if (!name) throw bad_request(name.error().message);
    if (text::document_format(*name).empty()) {
      throw ApiError{415, "unsupported_file_type",
                     "'" + *name + "' is not a supported document (" + text::supported_extensions() + ")"};
    }
    if (!names.insert(*name).second) throw bad_request("'" + *name + "' is uploaded twice");
    if (upload.files.size() == kMaxUploadFiles) {
      throw bad_request("an upload holds at most " + std::to_string(kMaxUploadFiles) +
                        " files: send the rest in another");
    }
    jobs::UploadedFile file;
    file.name = std::move(*name);
    file.body = part.body;
    upload.files.push_back(std::move(file));
  }
  if (upload.files.empty())
    throw bad_request("the form holds no files (send them as file fields, e.g. -F files=@a.pdf)");
  for (auto& [name, metadata] : own) {
    if (!names.contains(name)) throw bad_request("'metadata[" + name + "]' names no file of the upload");
  }
  for (auto& file : upload.files) {
    const auto it = own.find(file.name);
    if (it == own.end()) continue;
    if (shared) {  // what the file gets, the form's and its own together, is within the bounds too
      nlohmann::json merged = *shared;
      for (const auto& [key, value] : it->second.items()) merged[key] = value;
      if (auto checked = text::check_metadata(merged, "metadata with metadata[" + file.name + "]"); !checked)
        throw bad_request(checked.error().message);
    }
    file.metadata_json = compact(it->second);
  }
  if (shared) upload.metadata_json = compact(*shared);
  return upload;
}

}  // namespace kotae::server
