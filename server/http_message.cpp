#include "server/http_message.h"

namespace kotae::server {

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

std::string HttpRequest::query_value(const std::string& name, const std::string& fallback) const {
  const auto it = query.find(name);
  return it == query.end() ? fallback : it->second;
}

}  // namespace kotae::server
