#pragma once
// Who may call `kotae serve`, as its flags say (docs/auth.md): the audit trail's settings, the
// OpenID provider (bearer tokens and the web page's sign-in), an authenticating proxy, and the roles
// groups give; read into server::ServerOptions by run_serve.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/audit_recorder.h"
#include "server/auth/openid_provider.h"
#include "server/trusted_proxy.h"
#include "server/web_sessions.h"

namespace kotae::app {

// The OpenID provider's settings as the flags give them (docs/auth.md), read into
// server::ServerOptions::oidc by run_serve.
struct OidcFlags {
  std::string issuer;  // empty: no provider
  std::vector<std::string> audiences;
  std::string user_claim = "sub", name_claim = "name", email_claim = "email", groups_claim = "groups";
  std::string tenant_claim, tenant;      // the tenant from a claim, or one fixed tenant
  std::vector<std::string> tenant_map;   // CLAIM_VALUE=TENANT
  std::vector<std::string> group_roles;  // GROUP=ROLE
  std::string default_role = "reader";
  double keys_min_interval_s = 30;
  // The web page's sign-in (authorization code flow), when client_id is set.
  std::string client_id, client_secret_file, redirect_url, scopes = "openid profile email";
  double session_idle_minutes = 60, session_max_hours = 12, session_revalidate_minutes = 5;
  bool auto_sign_in = false;  // the page goes straight to the provider instead of offering "Sign in"
};

// An authenticating proxy in front (oauth2-proxy, a company gateway): its headers as the flags give them.
struct ProxyFlags {
  std::vector<std::string> from;  // CIDRs
  std::string user_header = "X-Forwarded-User", email_header = "X-Forwarded-Email";
  std::string name_header = "X-Forwarded-Preferred-Username", groups_header = "X-Forwarded-Groups";
  std::string tenant_header, tenant;
};

// Adds their flags (--audit-*, --oidc-*, --session-*, --group-role, --default-role, --trusted-proxy,
// --proxy-*) to `command`.
void add_access_flags(CLI::App& command, server::AuditOptions& audit, OidcFlags& oidc, ProxyFlags& proxy);
// The provider's settings from the flags, or nothing without --oidc-issuer; an error names a bad flag.
Result<std::optional<server::auth::OpenIdOptions>> oidc_options(const OidcFlags& flags);
// The web page's sign-in from the flags (the client's secret read from its file or the environment),
// or nothing without --oidc-client-id.
Result<std::optional<server::SignInOptions>> sign_in_options(const OidcFlags& flags);
Result<server::auth::GroupRoles> group_roles(const OidcFlags& flags);
// The trusted proxy from the flags, or nothing without --trusted-proxy.
Result<std::optional<server::TrustedProxyOptions>> proxy_options(const ProxyFlags& flags, const OidcFlags& people);

}  // namespace kotae::app
