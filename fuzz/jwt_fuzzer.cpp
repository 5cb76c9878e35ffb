// Bearer tokens and JWKS documents (server/auth/): every token from outside goes through
// verify_token before anything trusts it, and every provider's JWKS through SigningKeys::parse.
// Input starting with '{': a JWKS (at most kMaxJwksKeys keys come out). Anything else: a token checked
// against one fixed P-256 key at a fixed time. No input may verify: the seed is that key's real
// signature over expired claims, so a mutated token that passes would be a forgery or a skipped check.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/assert.h"
#include "core/base64url.h"
#include "server/auth/claim_mapping.h"
#include "server/auth/jwt.h"

namespace {

using namespace kotae::server::auth;

const SigningKeys& fixed_keys() {
  static const SigningKeys keys = SigningKeys::parse(
                                      R"({"keys": [{"kty": "EC", "crv": "P-256", "kid": "fuzz-1", "use": "sig",
                    "x": "m3DHaFOonfchtk_0JYus-G2cccgp-PmMgzqMW_bdkIc",
                    "y": "O49NiWCbuYwZkBgwAor1yramQKFTqp8h1GTERLyOU40"}]})")
                                      .value();
  return keys;
}

TokenRules fixed_rules() {
  TokenRules rules;
  rules.issuer = "https://id.example.com";
  rules.audiences = {"kotae"};
  return rules;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.starts_with('{')) {
    const auto keys = SigningKeys::parse(input);
    if (keys) {
      KOTAE_ASSERT(keys->size() >= 1 && keys->size() <= kMaxJwksKeys);
      (void)keys->find("", Algorithm::es256);
    }
    return 0;
  }
  static const TokenRules rules = fixed_rules();
  const auto verified = verify_token(input, fixed_keys(), rules, 1'800'000'000);
  KOTAE_ASSERT(!verified);
  (void)read_token_header(input, rules);
  // The claims reader, on whatever payload the token carries.
  if (const auto first = input.find('.'); first != std::string_view::npos) {
    const auto payload = kotae::base64url_decode(input.substr(first + 1, input.find('.', first + 1) - first - 1));
    if (payload && payload->size() < 8192) {
      const auto claims = nlohmann::json::parse(*payload, nullptr, false);
      if (claims.is_object()) {
        ClaimNames names;
        names.tenant = "tenant";
        const auto person = identity_from_claims(claims, names, TenantMapping{});
        if (person) KOTAE_ASSERT(!person->user.empty() && person->groups.size() <= kMaxGroups);
      }
    }
  }
  return 0;
}
