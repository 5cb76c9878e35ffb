#pragma once
// A JSON Web Token (RFC 7519) in compact JWS form checked the way a resource server must: size and
// shape first, then the header's algorithm against the allow-list, the signature against the
// provider's keys, then issuer, audience, expiry and not-before with a small clock skew. Only then are
// its claims returned.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "server/auth/signing_key.h"

namespace kotae::server::auth {

inline constexpr std::size_t kMaxTokenBytes = 16 * 1024;

struct TokenRules {
  std::string issuer;                  // "iss" must be exactly this
  std::vector<std::string> audiences;  // "aud" (a string or a list) must name one of these
  std::chrono::seconds leeway{60};     // clock skew allowed on exp, nbf and iat
  std::vector<Algorithm> algorithms{Algorithm::rs256, Algorithm::rs384, Algorithm::rs512, Algorithm::ps256,
                                    Algorithm::ps384, Algorithm::ps512, Algorithm::es256, Algorithm::es384};
};

// The header's "kid" and "alg" without checking anything else: which key to look for.
struct TokenHeader {
  std::string kid;
  Algorithm algorithm;
};
// invalid_argument when the token is not a compact JWS of an allowed algorithm.
Result<TokenHeader> read_token_header(std::string_view token, const TokenRules& rules);

// The token's claims when every check holds. The error says which failed (for the log and the
// 401); not_found when no key in `keys` has the header's kid: the caller fetches the JWKS again
// (the provider rotated its keys) and asks once more.
Result<nlohmann::json> verify_token(std::string_view token, const SigningKeys& keys, const TokenRules& rules,
                                    std::int64_t now_seconds);

}  // namespace kotae::server::auth
