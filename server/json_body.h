#pragma once
// Reading a JSON request body into typed values. Anything missing, mistyped or out of range throws an
// ApiError (400) naming the field; the dispatcher turns it into the error response, so a handler reads
// like the request it accepts.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_depth.h"  // nested_deeper_than, for every JSON read from outside

#include "server/api_error.h"
#include "server/http_message.h"

namespace kotae::server {

inline constexpr int kMaxJsonDepth = 64;

// The body as a JSON object (an empty body is an empty object when `allow_empty`). 415 unless the body
// is declared application/json; 400 when it is nested deeper than kMaxJsonDepth or is not JSON.
nlohmann::json parse_json_object(const HttpRequest& request, bool allow_empty = false);

std::string string_field(const nlohmann::json& body, const char* name);  // required
std::string string_field(const nlohmann::json& body, const char* name, const std::string& fallback);
bool bool_field(const nlohmann::json& body, const char* name, bool fallback);
double number_field(const nlohmann::json& body, const char* name, double fallback, double min, double max);
long long integer_field(const nlohmann::json& body, const char* name, long long fallback, long long min, long long max);
std::optional<long long> optional_integer(const nlohmann::json& body, const char* name, long long min, long long max);
// A string or a list of strings (OpenAI's "stop", "input").
std::vector<std::string> strings_field(const nlohmann::json& body, const char* name, std::size_t max_items);
// Texts to embed or tokenize: a required string or list of strings (token ids refused, `token_ids_hint`
// added to the message), at most `max_items` of them, each at most `max_bytes`. May be empty.
std::vector<std::string> texts_field(const nlohmann::json& body, const char* name, std::size_t max_items,
                                     std::size_t max_bytes, std::string_view token_ids_hint = "");

// The value, or throws the error as an ApiError.
template <class T>
T value_or_throw(Result<T> result) {
  if (!result) throw from_error(result.error());
  return std::move(*result);
}
inline void ok_or_throw(const Result<void>& result) {
  if (!result) throw from_error(result.error());
}

}  // namespace kotae::server
