#pragma once
// multipart/form-data bodies (RFC 7578): the parts of an upload, each with its field name, file name
// and bytes. Views point into the body, which must outlive them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kotae::server {

struct FormPart {
  std::string name;      // the form field
  std::string filename;  // as the client sent it (not yet checked); empty for a plain field
  std::string content_type;
  std::string_view body;
};

// The boundary of a "multipart/form-data; boundary=..." content type, or nullopt.
std::optional<std::string> multipart_boundary(std::string_view content_type);
inline constexpr std::size_t kMaxFormParts = 1024;

// invalid_argument for a body that does not follow the format or has more than kMaxFormParts parts.
Result<std::vector<FormPart>> parse_multipart(std::string_view body, std::string_view boundary);

// A file name safe to store: the client's name without any directory part; rejected (with the reason)
// when empty, hidden, "..", or holding control characters or path separators.
Result<std::string> safe_filename(std::string_view client_name);

}  // namespace kotae::server
