#pragma once
// The company's OpenID provider as Kotae uses it: its discovery document (endpoints, the JWKS's
// address) and its signing keys, fetched when first needed and again when a token names a key not yet
// known (the provider rotated them) or the keys are an hour old, at most once per keys_min_interval
// (30 s) whatever tokens arrive; and the person a bearer token names, with the role over the tenant their groups give.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "server/auth/claim_mapping.h"
#include "server/auth/group_roles.h"
#include "server/auth/jwt.h"
#include "server/auth/role.h"

namespace kotae::server::auth {

struct OpenIdOptions {
  std::string issuer;                  // https://…, exactly as the provider's tokens name it
  std::vector<std::string> audiences;  // a bearer token's "aud" must name one; none: bearer tokens are refused
  ClaimNames claims;
  TenantMapping tenants;
  GroupRoles roles;  // their role over their tenant from their groups
  std::chrono::seconds leeway{60};
  long timeout_ms = 5000;  // each call to the provider
  // Between two fetches of the keys, however many tokens name a key not yet known.
  std::chrono::seconds keys_min_interval{30};
};

struct OpenIdEndpoints {
  std::string authorization, token, jwks, end_session;  // end_session: empty when the provider has none
};

// Who a token names: the person, and their role over their tenant.
struct TokenPrincipal {
  TokenIdentity identity;
  Role role = Role::reader;
};

class OpenIdProvider {
 public:
  explicit OpenIdProvider(OpenIdOptions options);

  const OpenIdOptions& options() const { return options_; }
  // The endpoints, fetching the discovery document when it has not been read yet.
  Result<OpenIdEndpoints> endpoints();
  // The person a bearer access token names. invalid_argument when the token is refused (why, for the
  // log and the 401); unavailable when the provider could not be asked for its keys.
  Result<TokenPrincipal> verify_access_token(std::string_view token);
  // An ID token from the sign-in's code exchange: its audience is the client, its nonce the one sent.
  Result<TokenPrincipal> verify_id_token(std::string_view token, std::string_view client_id, std::string_view nonce);
  // An ID token from a refresh at the token endpoint (a back channel, no nonce to check).
  Result<TokenPrincipal> verify_refreshed_id_token(std::string_view token, std::string_view client_id);
  // Whether `token` looks like a JWT (three base64url parts) rather than an API key.
  static bool looks_like_jwt(std::string_view token);

 private:
  using Clock = std::chrono::steady_clock;
  enum class Kind { access, id_token, refreshed_id_token };
  Result<TokenPrincipal> verify(std::string_view token, const TokenRules& rules, std::string_view nonce, Kind kind);
  // Discovery (once) and the JWKS; `refresh`: fetch the JWKS again if the last fetch is 30 s old.
  Result<std::shared_ptr<const SigningKeys>> keys(bool refresh);
  Result<void> discover_locked();
  Result<void> fetch_keys_locked();

  OpenIdOptions options_;
  std::mutex mutex_;  // one fetch at a time; guards what follows
  std::optional<OpenIdEndpoints> endpoints_;
  std::shared_ptr<const SigningKeys> keys_;
  Clock::time_point fetched_{}, last_attempt_{}, discovery_attempt_{};
};

}  // namespace kotae::server::auth
