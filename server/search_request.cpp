#include "server/search_request.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "server/json_body.h"
#include "store/metadata_filter.h"

namespace kotae::server {

namespace {

constexpr std::size_t kMaxFilterDocuments = 1000;

// filters.documents: the ids GET /v1/collections/{name}/documents shows, at most kMaxFilterDocuments.
std::vector<std::int64_t> filter_documents(const nlohmann::json& filters) {
  const auto it = filters.find("documents");
  if (it == filters.end() || it->is_null()) return {};
  if (!it->is_array()) throw invalid_filter("'filters.documents' must be a list of document ids");
  if (it->empty()) throw invalid_filter("'filters.documents' is empty: leave it out to search every document");
  if (it->size() > kMaxFilterDocuments) {
    throw invalid_filter("'filters.documents' names " + std::to_string(it->size()) + " documents, over the limit of " +
                         std::to_string(kMaxFilterDocuments));
  }
  std::vector<std::int64_t> ids;
  ids.reserve(it->size());
  for (const auto& id : *it) {
    if (!id.is_number_integer()) throw invalid_filter("'filters.documents' must hold document ids (integers)");
    // An id past int64's range names no document, as -1 does not.
    constexpr auto kLargest = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    ids.push_back(id.is_number_unsigned() && id.get<std::uint64_t>() > kLargest ? -1 : id.get<std::int64_t>());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// filters.where: the metadata filter (store/metadata_filter.h); blank is none.
std::shared_ptr<const store::MetadataFilter> filter_where(const nlohmann::json& filters) {
  const auto it = filters.find("where");
  if (it == filters.end() || it->is_null()) return nullptr;
  if (!it->is_string()) throw invalid_filter("'filters.where' must be a string (docs/search.md#metadata-filters)");
  const auto& text = it->get_ref<const std::string&>();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return nullptr;
  auto parsed = store::MetadataFilter::parse(text);
  if (!parsed) throw invalid_filter("'filters.where': " + parsed.error().message);
  return *parsed;
}

}  // namespace

ApiError invalid_filter(std::string message) {
  return {400, "invalid_filter", std::move(message)};
}

void check_filter_fields(const Result<void>& checked) {
  if (!checked) throw invalid_filter("'filters.where': " + checked.error().message);
}

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
    options.filter.documents = filter_documents(*it);
    options.filter.where = filter_where(*it);
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
