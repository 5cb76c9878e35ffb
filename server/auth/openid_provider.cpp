#include "server/auth/openid_provider.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "server/auth/provider_http.h"
#include "server/json_body.h"  // nested_deeper_than

namespace kotae::server::auth {
namespace {

constexpr auto kKeysMaxAge = std::chrono::hours(1);  // keys older than this are fetched again (a key withdrawn)

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<nlohmann::json> json_from_provider(const std::string& url, long timeout_ms, const char* what) {
  const auto response = KOTAE_TRY_VALUE(call_provider({url, "", "", "", 256 * 1024, timeout_ms}));
  if (response.status != 200) {
    return make_error(ErrorCode::unavailable,
                      std::string("the provider's ") + what + " answered " + std::to_string(response.status));
  }
  if (nested_deeper_than(response.body, 16))
    return make_error(ErrorCode::invalid_argument, std::string("the provider's ") + what + " is nested too deeply");
  auto json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object())
    return make_error(ErrorCode::invalid_argument, std::string("the provider's ") + what + " is not a JSON object");
  return json;
}

}  // namespace

OpenIdProvider::OpenIdProvider(OpenIdOptions options) : options_(std::move(options)) {}

bool OpenIdProvider::looks_like_jwt(std::string_view token) {
  return token.starts_with("eyJ") && std::count(token.begin(), token.end(), '.') == 2;
}

Result<void> OpenIdProvider::discover_locked() {
  if (endpoints_) return {};
  const std::string& issuer_url = options_.issuer;
  const auto document = KOTAE_TRY_VALUE(
      json_from_provider(issuer_url + (issuer_url.ends_with('/') ? "" : "/") + ".well-known/openid-configuration",
                         options_.timeout_ms, "discovery document"));
  // The document must be the issuer's own, exactly (OpenID Connect Discovery §4.3): a mix-up is refused.
  const auto issuer = document.value("issuer", "");
  if (issuer != options_.issuer) {
    return make_error(ErrorCode::invalid_argument, "the discovery document names the issuer '" + issuer.substr(0, 200) +
                                                       "', not " + options_.issuer);
  }
  OpenIdEndpoints found{document.value("authorization_endpoint", ""), document.value("token_endpoint", ""),
                        document.value("jwks_uri", ""), document.value("end_session_endpoint", "")};
  for (const auto* url : {&found.authorization, &found.token, &found.jwks}) {
    if (!provider_url_allowed(*url)) {
      return make_error(ErrorCode::invalid_argument,
                        "the discovery document lacks an https endpoint (authorization, token, jwks_uri)");
    }
  }
  if (!found.end_session.empty() && !provider_url_allowed(found.end_session)) found.end_session.clear();
  endpoints_ = std::move(found);
  return {};
}

Result<void> OpenIdProvider::fetch_keys_locked() {
  last_attempt_ = Clock::now();
  KOTAE_TRY(discover_locked());
  const auto response =
      KOTAE_TRY_VALUE(call_provider({endpoints_->jwks, "", "", "", kMaxJwksBytes, options_.timeout_ms}));
  if (response.status != 200)
    return make_error(ErrorCode::unavailable, "the provider's JWKS answered " + std::to_string(response.status));
  auto keys = KOTAE_TRY_VALUE(SigningKeys::parse(response.body));
  log_event("oidc_keys_fetched", {{"issuer", options_.issuer}, {"keys", keys.size()}});
  keys_ = std::make_shared<const SigningKeys>(std::move(keys));
  fetched_ = Clock::now();
  return {};
}

Result<std::shared_ptr<const SigningKeys>> OpenIdProvider::keys(bool refresh) {
  std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  const bool stale = !keys_ || now - fetched_ > kKeysMaxAge || refresh;
  if (stale && (last_attempt_ == Clock::time_point{} || now - last_attempt_ >= options_.keys_min_interval)) {
    if (auto fetched = fetch_keys_locked(); !fetched && !keys_) return fetched.error();
  }
  if (!keys_) return make_error(ErrorCode::unavailable, "the provider's keys could not be fetched; retry shortly");
  return keys_;
}

Result<OpenIdEndpoints> OpenIdProvider::endpoints() {
  std::lock_guard lock(mutex_);
  // Discovery alone is tried again after 5 s (the keys' fetches keep their own interval).
  if (!endpoints_ &&
      (discovery_attempt_ == Clock::time_point{} || Clock::now() - discovery_attempt_ >= std::chrono::seconds(5))) {
    discovery_attempt_ = Clock::now();
    KOTAE_TRY(discover_locked());
  }
  if (!endpoints_) return make_error(ErrorCode::unavailable, "the provider's discovery document could not be read");
  return *endpoints_;
}

Result<TokenPrincipal> OpenIdProvider::verify(std::string_view token, const TokenRules& rules, std::string_view nonce,
                                              Kind kind) {
  KOTAE_TRY(read_token_header(token, rules));  // a malformed token or a refused algorithm costs no fetch
  auto keys = KOTAE_TRY_VALUE(this->keys(false));
  auto claims = verify_token(token, *keys, rules, unix_now());
  if (!claims && claims.error().code == ErrorCode::not_found) {
    keys = KOTAE_TRY_VALUE(this->keys(true));  // a key the provider added since: fetch once and look again
    claims = verify_token(token, *keys, rules, unix_now());
  }
  if (!claims) {
    if (claims.error().code == ErrorCode::not_found)
      return make_error(ErrorCode::invalid_argument, claims.error().message);
    return claims.error();
  }
  const auto nonce_claim = claims->find("nonce");
  if (kind == Kind::id_token) {
    if (nonce_claim == claims->end() || !nonce_claim->is_string() ||
        nonce_claim->get_ref<const std::string&>() != nonce)
      return make_error(ErrorCode::invalid_argument, "the ID token's nonce is not the one this sign-in sent");
  } else if (kind == Kind::access && nonce_claim != claims->end()) {
    // An ID token offered as an access token (both may name Kotae as their audience): refused.
    return make_error(ErrorCode::invalid_argument, "an ID token is not an access token");
  }
  TokenPrincipal principal;
  principal.identity = KOTAE_TRY_VALUE(identity_from_claims(*claims, options_.claims, options_.tenants));
  principal.role = options_.roles.of(principal.identity.groups);
  return principal;
}

Result<TokenPrincipal> OpenIdProvider::verify_access_token(std::string_view token) {
  if (options_.audiences.empty())
    return make_error(ErrorCode::invalid_argument, "bearer tokens are not accepted (no --oidc-audience)");
  TokenRules rules;
  rules.issuer = options_.issuer;
  rules.audiences = options_.audiences;
  rules.leeway = options_.leeway;
  return verify(token, rules, "", Kind::access);
}

Result<TokenPrincipal> OpenIdProvider::verify_id_token(std::string_view token, std::string_view client_id,
                                                       std::string_view nonce) {
  TokenRules rules;
  rules.issuer = options_.issuer;
  rules.audiences = {std::string(client_id)};
  rules.leeway = options_.leeway;
  return verify(token, rules, nonce, Kind::id_token);
}

Result<TokenPrincipal> OpenIdProvider::verify_refreshed_id_token(std::string_view token, std::string_view client_id) {
  TokenRules rules;
  rules.issuer = options_.issuer;
  rules.audiences = {std::string(client_id)};
  rules.leeway = options_.leeway;
  return verify(token, rules, "", Kind::refreshed_id_token);
}

}  // namespace kotae::server::auth
