// Uploads (server/upload_request.h, over server/multipart.h): the first line of the input is the
// Content-Type header, the rest the body. A form either fails with a 4xx ApiError or gives files whose
// names are safe to store and whose bytes lie inside the body, with metadata that is a checked object.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/assert.h"
#include "server/api_error.h"
#include "server/upload_request.h"
#include "text/document_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto eol = input.find('\n');
  kotae::server::HttpRequest request;
  request.method = "POST";
  request.headers = {{"content-type", std::string(input.substr(0, eol))}};
  request.body = eol == std::string_view::npos ? std::string() : std::string(input.substr(eol + 1));
  try {
    const auto upload = kotae::server::read_upload(request);
    const auto& files = upload.files;
    KOTAE_ASSERT(!files.empty() && files.size() <= kotae::server::kMaxUploadFiles);
    // Metadata that passed is a checked object (text/document_metadata.h).
    KOTAE_ASSERT(upload.metadata_json.empty() || kotae::text::parse_metadata(upload.metadata_json, "metadata").ok());
    for (const auto& file : files) {
      KOTAE_ASSERT(file.metadata_json.empty() || kotae::text::parse_metadata(file.metadata_json, "metadata").ok());
    }
    const char* begin = request.body.data();
    const char* end = begin + request.body.size();
    for (const auto& file : files) {
      KOTAE_ASSERT(!file.name.empty() && file.name.size() <= 255 && file.name.front() != '.');
      KOTAE_ASSERT(file.name.find_first_of("/\\") == std::string::npos);
      KOTAE_ASSERT(
          std::none_of(file.name.begin(), file.name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }));
      KOTAE_ASSERT(file.body.empty() || (file.body.data() >= begin && file.body.data() + file.body.size() <= end));
    }
  } catch (const kotae::server::ApiError& e) {
    KOTAE_ASSERT((e.status == 400 || e.status == 415) && !e.message.empty());
  }
  return 0;
}
