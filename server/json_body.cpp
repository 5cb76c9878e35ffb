#include "server/json_body.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kotae::server {
namespace {

const nlohmann::json* find(const nlohmann::json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void wrong(const char* name, const char* expected) {
  throw bad_request(std::string("'") + name + "' must be " + expected);
}

}  // namespace

nlohmann::json parse_json_object(const HttpRequest& request, bool allow_empty) {
  if (request.body.empty() && allow_empty) return nlohmann::json::object();
  // Only a declared JSON body: a web page may send text/plain anywhere without asking first (no CORS
  // preflight), so accepting it would let any page the user visits drive a local server.
  const std::string_view type = request.header("content-type");
  const std::string_view media = type.substr(0, type.find(';'));
  if (!(media.size() == 16 && std::equal(media.begin(), media.end(), "application/json", [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        }))) {
    throw ApiError{415, "unsupported_media_type",
                   "this endpoint takes a JSON body: send it with Content-Type: application/json" +
                       std::string(media.starts_with("multipart/") ? " (not a multipart form)" : "")};
  }
  // Deep nesting is refused before parsing: copying or destroying such a value recurses per level.
  if (nested_deeper_than(request.body, kMaxJsonDepth)) {
    throw bad_request("the request body's JSON is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) throw bad_request("the request body is not valid JSON");
  if (!body.is_object()) throw bad_request("the request body must be a JSON object");
  return body;
}

std::string string_field(const nlohmann::json& body, const char* name) {
  const auto* v = find(body, name);
  if (!v) throw bad_request(std::string("'") + name + "' is required");
  if (!v->is_string()) wrong(name, "a string");
  return v->get<std::string>();
}

std::string string_field(const nlohmann::json& body, const char* name, const std::string& fallback) {
  return find(body, name) ? string_field(body, name) : fallback;
}

bool bool_field(const nlohmann::json& body, const char* name, bool fallback) {
  const auto* v = find(body, name);
  if (!v) return fallback;
  if (!v->is_boolean()) wrong(name, "true or false");
  return v->get<bool>();
}

double number_field(const nlohmann::json& body, const char* name, double fallback, double min, double max) {
  const auto* v = find(body, name);
  if (!v) return fallback;
  if (!v->is_number()) wrong(name, "a number");
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max) {
    throw bad_request(std::string("'") + name + "' must be between " + std::to_string(min) + " and " +
                      std::to_string(max));
  }
  return x;
}

std::optional<long long> optional_integer(const nlohmann::json& body, const char* name, long long min, long long max) {
  const auto* v = find(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) wrong(name, "an integer");
  const long long x = v->get<long long>();
  if (x < min || x > max) {
    throw bad_request(std::string("'") + name + "' must be between " + std::to_string(min) + " and " +
                      std::to_string(max));
  }
  return x;
}

long long integer_field(const nlohmann::json& body, const char* name, long long fallback, long long min,
                        long long max) {
  return optional_integer(body, name, min, max).value_or(fallback);
}

std::vector<std::string> strings_field(const nlohmann::json& body, const char* name, std::size_t max_items) {
  const auto* v = find(body, name);
  if (!v) return {};
  if (v->is_string()) return {v->get<std::string>()};
  if (!v->is_array()) wrong(name, "a string or a list of strings");
  if (v->size() > max_items)
    throw bad_request(std::string("'") + name + "' has more than " + std::to_string(max_items) + " items");
  std::vector<std::string> out;
  for (const auto& item : *v) {
    if (!item.is_string()) wrong(name, "a string or a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::string> texts_field(const nlohmann::json& body, const char* name, std::size_t max_items,
                                     std::size_t max_bytes, std::string_view token_ids_hint) {
  const auto* v = find(body, name);
  if (!v) throw bad_request(std::string("'") + name + "' is required");
  if ((v->is_array() && !v->empty() && !(*v)[0].is_string()) || v->is_number()) {
    throw bad_request(std::string("'") + name +
                      "' must be text (a string or a list of strings); token ids are not supported" +
                      std::string(token_ids_hint));
  }
  auto texts = strings_field(body, name, max_items);
  for (const auto& t : texts) {
    if (t.size() > max_bytes) {
      throw bad_request(std::string("'") + name + "' holds a text longer than " + std::to_string(max_bytes) + " bytes");
    }
  }
  return texts;
}

}  // namespace kotae::server
