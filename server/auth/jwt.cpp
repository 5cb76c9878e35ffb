#include "server/auth/jwt.h"

#include <algorithm>
#include <cmath>

#include "core/base64url.h"
#include "server/json_body.h"  // nested_deeper_than

namespace kotae::server::auth {
namespace {

constexpr int kMaxTokenJsonDepth = 16;

Error refused(std::string why) {
  return make_error(ErrorCode::invalid_argument, "the token " + std::move(why));
}

struct TokenParts {
  std::string_view header, payload, signature;
  std::string_view signing_input;  // header.payload, as signed
};

Result<TokenParts> split(std::string_view token) {
  if (token.size() > kMaxTokenBytes) return refused("is longer than " + std::to_string(kMaxTokenBytes) + " bytes");
  const auto first = token.find('.');
  const auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return refused("is not a JWS in compact form (three parts separated by dots)");
  }
  TokenParts parts{token.substr(0, first), token.substr(first + 1, second - first - 1), token.substr(second + 1),
                   token.substr(0, second)};
  if (parts.header.empty() || parts.payload.empty()) return refused("has an empty header or payload");
  return parts;
}

Result<nlohmann::json> json_part(std::string_view encoded, const char* what) {
  const auto decoded = base64url_decode(encoded);
  if (!decoded) return refused(std::string("has a ") + what + " that is not base64url");
  if (nested_deeper_than(*decoded, kMaxTokenJsonDepth))
    return refused(std::string("has a ") + what + " nested too deeply");
  auto json = nlohmann::json::parse(*decoded, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return refused(std::string("has a ") + what + " that is not a JSON object");
  return json;
}

Result<TokenHeader> header_of(const nlohmann::json& header, const TokenRules& rules) {
  const auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string()) return refused("names no algorithm");
  const auto& name = alg->get_ref<const std::string&>();
  const auto algorithm = algorithm_named(name);
  if (!algorithm || std::find(rules.algorithms.begin(), rules.algorithms.end(), *algorithm) == rules.algorithms.end()) {
    return refused("is signed with \"" + name.substr(0, 16) + "\", which is not allowed");
  }
  // Extensions a verifier must understand (RFC 7515 §4.1.11): Kotae understands none, so it cannot
  // claim to have checked the token.
  if (header.contains("crit")) return refused("has critical header extensions");
  const auto kid = header.find("kid");
  if (kid != header.end() && !kid->is_string()) return refused("has a kid that is not a string");
  return TokenHeader{kid != header.end() ? kid->get<std::string>() : "", *algorithm};
}

// A NumericDate claim (seconds since the epoch), or nothing when absent; refused when not a number.
Result<std::optional<double>> date_claim(const nlohmann::json& claims, const char* name) {
  const auto it = claims.find(name);
  if (it == claims.end()) return std::optional<double>();
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    return refused(std::string("has a \"") + name + "\" that is not a date");
  return std::optional<double>(it->get<double>());
}

bool audience_matches(const nlohmann::json& aud, const std::vector<std::string>& wanted) {
  auto wanted_one = [&](const nlohmann::json& value) {
    return value.is_string() &&
           std::find(wanted.begin(), wanted.end(), value.get_ref<const std::string&>()) != wanted.end();
  };
  if (aud.is_string()) return wanted_one(aud);
  if (!aud.is_array() || aud.size() > 64) return false;
  return std::any_of(aud.begin(), aud.end(), wanted_one);
}

Result<void> check_claims(const nlohmann::json& claims, const TokenRules& rules, std::int64_t now) {
  const auto iss = claims.find("iss");
  if (iss == claims.end() || !iss->is_string() || iss->get_ref<const std::string&>() != rules.issuer)
    return refused("was not issued by " + rules.issuer);
  const auto aud = claims.find("aud");
  if (aud == claims.end() || !audience_matches(*aud, rules.audiences))
    return refused("is not meant for this service (aud)");
  const double leeway = static_cast<double>(rules.leeway.count()), t = static_cast<double>(now);
  const auto exp = KOTAE_TRY_VALUE(date_claim(claims, "exp"));
  if (!exp) return refused("has no expiry (exp)");
  if (t >= *exp + leeway) return refused("has expired");
  if (const auto nbf = KOTAE_TRY_VALUE(date_claim(claims, "nbf")); nbf && t + leeway < *nbf)
    return refused("is not valid yet (nbf)");
  if (const auto iat = KOTAE_TRY_VALUE(date_claim(claims, "iat")); iat && t + leeway < *iat)
    return refused("was issued in the future (iat)");
  return {};
}

}  // namespace

Result<TokenHeader> read_token_header(std::string_view token, const TokenRules& rules) {
  const auto parts = KOTAE_TRY_VALUE(split(token));
  return header_of(KOTAE_TRY_VALUE(json_part(parts.header, "header")), rules);
}

Result<nlohmann::json> verify_token(std::string_view token, const SigningKeys& keys, const TokenRules& rules,
                                    std::int64_t now_seconds) {
  const auto parts = KOTAE_TRY_VALUE(split(token));
  const auto header = KOTAE_TRY_VALUE(header_of(KOTAE_TRY_VALUE(json_part(parts.header, "header")), rules));
  const SigningKey* key = keys.find(header.kid, header.algorithm);
  if (!key) {
    return make_error(ErrorCode::not_found, "the token is signed by a key the provider does not publish (kid \"" +
                                                header.kid.substr(0, 64) + "\")");
  }
  const auto signature = base64url_decode(parts.signature);
  if (!signature || !key->verifies(header.algorithm, parts.signing_input, *signature))
    return refused("has a signature that is not valid");
  auto claims = KOTAE_TRY_VALUE(json_part(parts.payload, "payload"));
  KOTAE_TRY(check_claims(claims, rules, now_seconds));
  return claims;
}

}  // namespace kotae::server::auth
