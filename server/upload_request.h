#pragma once
// The body of an upload (POST /v1/collections/{name}/documents): a multipart/form-data form whose file
// fields are the documents. Throws an ApiError: 415 for another content type or an unsupported file
// type, 400 for a malformed form, an unsafe or repeated file name, or no file at all.

#include <string>
#include <string_view>
#include <vector>

#include "jobs/uploaded_file.h"
#include "server/http_message.h"

namespace kotae::server {

inline constexpr std::size_t kMaxUploadFiles = 256;

std::vector<jobs::UploadedFile> read_upload(const HttpRequest& request);

}  // namespace kotae::server
