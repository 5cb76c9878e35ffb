#include "server/search_request.h"

#include <algorithm>

#include "server/json_body.h"

namespace kotae::server {

search::SearchOptions search_options(const nlohmann::json& body, const ApiLimits& limits, std::size_t default_k) {
  search::SearchOptions options;
  const auto mode = search::parse_search_mode(string_field(body, "mode", "hybrid"));
  if (!mode) throw bad_request("'mode' must be bm25, vector or hybrid");
  options.mode = *mode;
  options.k = static_cast<std::size_t>(
      integer_field(body, "k", static_cast<long long>(default_k), 1, static_cast<long long>(limits.max_k)));
  options.candidates = std::max(options.candidates, options.k);
  options.rerank_candidates = std::max(options.rerank_candidates, options.k);
  options.rerank = bool_field(body, "rerank", true);
  if (const auto it = body.find("filters"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) throw bad_request("'filters' must be an object");
    options.filter.path_prefix = string_field(*it, "path_prefix", "");
    options.filter.formats = strings_field(*it, "formats", 16);
  }
  return options;
}

std::string query_text(const nlohmann::json& body, const char* name, const ApiLimits& limits) {
  auto text = string_field(body, name);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw bad_request(std::string("'") + name + "' is empty");
  if (text.size() > limits.max_query_bytes) {
    throw bad_request(std::string("'") + name + "' is longer than " + std::to_string(limits.max_query_bytes) +
                      " bytes");
  }
  return text;
}

SearchRequest read_search_request(const nlohmann::json& body, const ApiLimits& limits) {
  SearchRequest request;
  request.query = query_text(body, "query", limits);
  request.collection = string_field(body, "collection");
  request.options = search_options(body, limits, 10);
  return request;
}

}  // namespace kotae::server
