#include "server/router.h"

#include <map>

#include <nlohmann/json.hpp>

#include "server/json_body.h"  // nested_deeper_than

namespace kotae::server {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < path.size()) {
    const auto slash = path.find('/', at);
    const auto end = slash == std::string::npos ? path.size() : slash;
    if (end > at) out.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool is_param(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool matches(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
             std::map<std::string, std::string>* params) {
  if (pattern.size() != path.size()) return false;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (is_param(pattern[i])) {
      if (params) (*params)[pattern[i].substr(1, pattern[i].size() - 2)] = path[i];
    } else if (pattern[i] != path[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

CollectionOf collection_in_body() {
  return [](const Call& call) -> std::optional<std::string> {
    const auto& body = call.request.body;
    if (body.empty() || body.front() != '{' || nested_deeper_than(body, kMaxJsonDepth)) return std::nullopt;
    const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    const auto it = json.is_object() ? json.find("collection") : json.end();
    if (it == json.end() || !it->is_string()) return std::nullopt;  // the handler says what is wrong
    return it->get<std::string>();
  };
}

void Router::add(std::string method, std::string pattern, Handler handler, RouteOptions options) {
  if (!options.collection && pattern.find("/{name}") != std::string::npos) {
    options.collection = [](const Call& call) -> std::optional<std::string> {
      const auto it = call.request.path_params.find("name");
      return it == call.request.path_params.end() ? std::nullopt : std::optional(it->second);
    };
  }
  auto segments = split_path(pattern);
  routes_.push_back({std::move(method), std::move(pattern), std::move(segments), std::move(handler), options});
}

Router::Match Router::match(HttpRequest& request) const {
  return match(request.method, request.path, &request.path_params);
}

Router::Match Router::match(const std::string& method, const std::string& path) const {
  return match(method, path, nullptr);
}

Router::Match Router::match(const std::string& method, const std::string& request_path,
                            std::map<std::string, std::string>* params) const {
  Match result;
  const auto path = split_path(request_path);
  for (const auto& route : routes_) {
    if (!matches(route.segments, path, nullptr)) continue;
    if (route.method == method) {
      if (params) matches(route.segments, path, params);
      result.handler = &route.handler;
      result.options = route.options;
      result.pattern = route.pattern;
      return result;
    }
    result.path_known = true;
    if (!result.allowed.empty()) result.allowed += ", ";
    result.allowed += route.method;
  }
  return result;
}

}  // namespace kotae::server
