#include "server/collection_request.h"

#include <charconv>

#include "server/json_body.h"
#include "text/chunker.h"

namespace kotae::server {

assembly::NewCollection read_new_collection(const nlohmann::json& body) {
  assembly::NewCollection spec;
  spec.name = string_field(body, "name");
  spec.embedder = string_field(body, "embedder", "");
  spec.chunk_tokens = static_cast<std::size_t>(integer_field(body, "chunk_tokens", 0, 16, 8192));
  spec.overlap_tokens = static_cast<std::size_t>(integer_field(body, "overlap_tokens", 0, 0, 4096));
  const std::size_t chunk_tokens = spec.chunk_tokens ? spec.chunk_tokens : text::ChunkerOptions{}.max_tokens;
  if (spec.overlap_tokens * 2 >= chunk_tokens) {
    throw bad_request("'overlap_tokens' must be less than half of 'chunk_tokens' (" + std::to_string(chunk_tokens) +
                      ")");
  }
  return spec;
}

std::string read_collection_rename(const nlohmann::json& body) {
  for (const auto& [key, value] : body.items()) {
    if (key != "name") throw bad_request("'" + key.substr(0, 100) + "': only a collection's 'name' can be changed");
  }
  return string_field(body, "name");  // checked against the catalog's rules by the route
}

std::int64_t document_id(const std::string& text) {
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0)
    throw bad_request("document id '" + text + "' is not a positive integer");
  return id;
}

}  // namespace kotae::server
