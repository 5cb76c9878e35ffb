#include "server/multipart.h"

#include <algorithm>

namespace kotae::server {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The value of `key` in a header's parameters: form-data; name="files"; filename="a.pdf".
std::string parameter(std::string_view header, std::string_view key) {
  std::size_t at = 0;
  while ((at = header.find(';', at)) != std::string_view::npos) {
    ++at;
    auto rest = trim(header.substr(at));
    const auto eq = rest.find('=');
    if (eq == std::string_view::npos) continue;
    if (lower(trim(rest.substr(0, eq))) != key) continue;
    auto value = rest.substr(eq + 1);
    if (!value.empty() && value.front() == '"') {
      std::string out;
      for (std::size_t i = 1; i < value.size() && value[i] != '"'; ++i) {
        // Only \" and \\ are escapes: browsers send backslashes as they are (RFC 7578), so a Windows
        // path keeps its separators ("C:\Users\a.txt" is a.txt, "..\x.txt" climbs out).
        if (value[i] == '\\' && i + 1 < value.size() && (value[i + 1] == '"' || value[i + 1] == '\\')) ++i;
        out.push_back(value[i]);
      }
      return out;
    }
    return std::string(trim(value.substr(0, value.find(';'))));
  }
  return "";
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type) {
  if (!lower(content_type).starts_with("multipart/form-data")) return std::nullopt;
  auto boundary = parameter(content_type, "boundary");
  if (boundary.empty() || boundary.size() > 200) return std::nullopt;
  return boundary;
}

Result<std::vector<FormPart>> parse_multipart(std::string_view body, std::string_view boundary) {
  const std::string delimiter = "--" + std::string(boundary);
  auto bad = [](const std::string& why) {
    return make_error(ErrorCode::invalid_argument, "malformed multipart body: " + why);
  };
  std::size_t at = body.find(delimiter);
  if (at == std::string_view::npos) return bad("no boundary");
  std::vector<FormPart> parts;
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") return parts;  // the closing delimiter
    if (body.substr(at, 2) != "\r\n") return bad("a boundary not followed by a line break");
    at += 2;
    const auto headers_end = body.find("\r\n\r\n", at);
    if (headers_end == std::string_view::npos) return bad("a part without a blank line after its headers");
    FormPart part;
    for (auto headers = body.substr(at, headers_end - at); !headers.empty();) {
      const auto eol = headers.find("\r\n");
      const auto line = headers.substr(0, eol);
      headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) return bad("a part header without ':'");
      const auto name = lower(trim(line.substr(0, colon)));
      const auto value = trim(line.substr(colon + 1));
      if (name == "content-disposition") {
        part.name = parameter(value, "name");
        part.filename = parameter(value, "filename");
      } else if (name == "content-type") {
        part.content_type = std::string(value);
      }
    }
    const auto content = headers_end + 4;
    const auto next = body.find("\r\n" + delimiter, content);
    if (next == std::string_view::npos) return bad("a part without a closing boundary");
    part.body = body.substr(content, next - content);
    if (parts.size() == kMaxFormParts) return bad("more than " + std::to_string(kMaxFormParts) + " parts");
    parts.push_back(std::move(part));
    at = next + 2;
  }
}

Result<std::string> safe_filename(std::string_view client_name) {
  // Browsers on Windows may send a full path: keep its last component.
  const auto slash = client_name.find_last_of("/\\");
  std::string name(slash == std::string_view::npos ? client_name : client_name.substr(slash + 1));
  auto reject = [&](const char* why) {
    return make_error(ErrorCode::invalid_argument, "file name '" + std::string(client_name) + "' " + why);
  };
  // A ".." anywhere is an attempt to leave the upload folder, not a browser's habit: refuse it.
  for (std::size_t at = 0; at <= client_name.size();) {
    const auto end = std::min(client_name.find_first_of("/\\", at), client_name.size());
    if (client_name.substr(at, end - at) == "..") return reject("climbs out of its folder");
    at = end + 1;
  }
  if (name.empty()) return reject("is empty");
  if (name.size() > 255) return reject("is longer than 255 bytes");
  if (name == "." || name == ".." || name.front() == '.') return reject("is hidden or a directory");
  if (std::any_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    return reject("holds control characters");
  }
  return name;
}

}  // namespace kotae::server
