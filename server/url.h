#pragma once
// Request targets: percent-decoding and query strings.

#include <map>
#include <string>
#include <string_view>

namespace kotae::server {

// "%2F" → "/"; with `plus_is_space` (query strings) "+" → " ". Malformed escapes are kept as they are.
std::string percent_decode(std::string_view text, bool plus_is_space);
// "a=1&b=x%20y" → {a: "1", b: "x y"}; a name without "=" maps to "".
std::map<std::string, std::string> parse_query(std::string_view query);

}  // namespace kotae::server
