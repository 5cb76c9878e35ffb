#pragma once
// An authenticating proxy in front of Kotae (oauth2-proxy, a company gateway) that signs people in and
// names them in request headers (X-Forwarded-User, -Email, -Preferred-Username, -Groups). The headers
// are believed only from the proxy's addresses (--trusted-proxy CIDR) and removed from every other
// request, so nobody else can name themselves; a change from a browser behind the proxy must come from
// the page's own origin (the proxy's cookie rides along on another site's form too).

#include <optional>
#include <string>
#include <vector>

#include "server/address_range.h"
#include "server/auth/group_roles.h"
#include "server/http_message.h"
#include "server/principal.h"

namespace kotae::server {

struct TrustedProxyOptions {
  std::vector<AddressRange> from;
  std::string user_header = "x-forwarded-user";  // lower-case, as requests keep header names
  std::string email_header = "x-forwarded-email";
  std::string name_header = "x-forwarded-preferred-username";
  std::string groups_header = "x-forwarded-groups";  // comma-separated
  std::string tenant_header;                         // empty: every user is in `tenant`
  std::string tenant;
  auth::GroupRoles roles;
};

class TrustedProxy {
 public:
  explicit TrustedProxy(TrustedProxyOptions options) : options_(std::move(options)) {}

  bool trusts(const std::string& address) const;
  // Whether the request names a user in the proxy's header (believed or not).
  bool names_a_user(const HttpRequest& request) const;
  // The proxy's headers removed (a request from elsewhere).
  void strip(HttpRequest& request) const;
  // The person the trusted proxy names; an error when the headers are unusable (too long, too many
  // groups, no tenant); nothing when it names nobody.
  Result<std::optional<Principal>> principal(const HttpRequest& request) const;

 private:
  TrustedProxyOptions options_;
};

}  // namespace kotae::server
