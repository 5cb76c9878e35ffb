#include "server/upload_request.h"

#include <unordered_set>

#include "server/api_error.h"
#include "server/multipart.h"
#include "text/loaders/loader.h"

namespace kotae::server {

std::vector<jobs::UploadedFile> read_upload(const HttpRequest& request) {
  const auto boundary = multipart_boundary(request.header("content-type"));
  if (!boundary) {
    throw ApiError{415, "unsupported_media_type", "upload files as multipart/form-data (curl -F files=@report.pdf)"};
  }
  auto parts = parse_multipart(request.body, *boundary);
  if (!parts) throw from_error(parts.error());
  std::vector<jobs::UploadedFile> files;
  std::unordered_set<std::string> names;  // a repeated name is found in one pass, however many files
  for (const auto& part : *parts) {
    if (part.filename.empty()) continue;  // a plain form field
    auto name = safe_filename(part.filename);
    if (!name) throw bad_request(name.error().message);
    if (text::document_format(*name).empty()) {
      throw ApiError{415, "unsupported_file_type",
                     "'" + *name + "' is not a supported document (" + text::supported_extensions() + ")"};
    }
    if (!names.insert(*name).second) throw bad_request("'" + *name + "' is uploaded twice");
    if (files.size() == kMaxUploadFiles) {
      throw bad_request("an upload holds at most " + std::to_string(kMaxUploadFiles) +
                        " files: send the rest in another");
    }
    files.push_back({std::move(*name), part.body});
  }
  if (files.empty()) throw bad_request("the form holds no files (send them as file fields, e.g. -F files=@a.pdf)");
  return files;
}

}  // namespace kotae::server
