#pragma once
// Base64url without padding (RFC 7515 §2): how JSON Web Tokens, JWKs and PKCE carry bytes.

#include <optional>
#include <string>
#include <string_view>

namespace kotae {

std::string base64url_encode(std::string_view bytes);
// The bytes, or nothing when `text` holds a character outside the alphabet, padding, or a length no
// encoding has (4n + 1).
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace kotae
