#pragma once
// The body of an upload (POST /v1/collections/{name}/documents): a multipart/form-data form whose file
// fields are the documents, and optional metadata (text/document_metadata.h): a field `metadata`, a
// JSON object for every file, and fields `metadata[NAME]`, one file's own (its keys win), both read as
// metadata even when sent as files. Throws an ApiError: 415 for another content type or an
// unsupported file type, 400 for a malformed form, an unsafe or repeated file name, no file at all, or
// metadata that is not a valid object, names no file of the form or is over its limits: all decided
// before anything of the upload is kept.

#include <string>
#include <string_view>
#include <vector>

#include "jobs/uploaded_file.h"
#include "server/http_message.h"

namespace kotae::server {

inline constexpr std::size_t kMaxUploadFiles = 256;
// Every metadata field of one form together (they travel in the job's record).
inline constexpr std::size_t kMaxUploadMetadataBytes = 64 * 1024;

struct Upload {
  std::vector<jobs::UploadedFile> files;  // each with its own metadata[NAME], checked
  std::string metadata_json;              // the `metadata` field, checked; "" when none
};

Upload read_upload(const HttpRequest& request);

}  // namespace kotae::server
