#include "app/access_flags.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "server/address_range.h"
#include "server/auth/provider_http.h"
#include "server/tenant_name.h"

namespace kotae::app {

void add_access_flags(CLI::App& command, server::AuditOptions& audit, OidcFlags& oidc, ProxyFlags& proxy) {
  auto* cmd = &command;
  auto flag = [&](const char* name, auto& value, const char* env, const char* help) {
    return cmd->add_option(name, value, help)->envname(env)->capture_default_str();
  };
  cmd->add_flag("--audit-questions", audit.questions,
                "keep the text of questions (ask, chat, search) in the audit trail; off: only that one was asked")
      ->envname("KOTAE_AUDIT_QUESTIONS");
  flag("--audit-retention-days", audit.retention_days, "KOTAE_AUDIT_RETENTION_DAYS",
       "audit events older than this are removed (hourly)")
      ->check(CLI::Range(1.0 / 24, 36500.0));
  flag("--audit-max-events", audit.max_events, "KOTAE_AUDIT_MAX_EVENTS",
       "audit events kept at most (the oldest go first)")
      ->check(CLI::Range(1000, 1000000000));
  flag("--oidc-issuer", oidc.issuer, "KOTAE_OIDC_ISSUER",
       "the OpenID provider whose bearer tokens (and sign-ins) are accepted beside API keys (docs/auth.md)");
  flag("--oidc-audience", oidc.audiences, "KOTAE_OIDC_AUDIENCE",
       "a bearer token's aud must name one of these; none: bearer tokens are refused");
  flag("--oidc-user-claim", oidc.user_claim, "KOTAE_OIDC_USER_CLAIM", "the claim with the user's stable id");
  flag("--oidc-name-claim", oidc.name_claim, "KOTAE_OIDC_NAME_CLAIM", "the claim with the user's name");
  flag("--oidc-email-claim", oidc.email_claim, "KOTAE_OIDC_EMAIL_CLAIM", "the claim with the user's e-mail");
  flag("--oidc-groups-claim", oidc.groups_claim, "KOTAE_OIDC_GROUPS_CLAIM",
       "the claim with the user's groups (a dotted path: realm_access.roles)");
  flag("--oidc-tenant-claim", oidc.tenant_claim, "KOTAE_OIDC_TENANT_CLAIM",
       "the claim naming the user's tenant (or mapped by --oidc-tenant-map)");
  flag("--oidc-tenant", oidc.tenant, "KOTAE_OIDC_TENANT", "the tenant of every user without a tenant claim");
  flag("--oidc-tenant-map", oidc.tenant_map, "KOTAE_OIDC_TENANT_MAP",
       "CLAIM_VALUE=TENANT: the tenant claim's value mapped to a tenant (others are refused)");
  flag("--group-role", oidc.group_roles, "KOTAE_GROUP_ROLE",
       "GROUP=ROLE: people in the group (a token's, a session's, the proxy's) have this role over their "
       "tenant (reader, editor, owner, admin)");
  flag("--default-role", oidc.default_role, "KOTAE_DEFAULT_ROLE",
       "the role over their tenant of people no --group-role names")
      ->check(CLI::IsMember({"reader", "editor", "owner", "admin"}));
  flag("--trusted-proxy", proxy.from, "KOTAE_TRUSTED_PROXY",
       "CIDR of an authenticating proxy whose user headers are believed (others' are removed); repeatable");
  flag("--proxy-user-header", proxy.user_header, "KOTAE_PROXY_USER_HEADER", "the proxy's header with the user's id");
  flag("--proxy-email-header", proxy.email_header, "KOTAE_PROXY_EMAIL_HEADER", "the proxy's header with the e-mail");
  flag("--proxy-name-header", proxy.name_header, "KOTAE_PROXY_NAME_HEADER", "the proxy's header with the name");
  flag("--proxy-groups-header", proxy.groups_header, "KOTAE_PROXY_GROUPS_HEADER",
       "the proxy's header with the groups, comma-separated");
  flag("--proxy-tenant-header", proxy.tenant_header, "KOTAE_PROXY_TENANT_HEADER",
       "the proxy's header naming the tenant (else --proxy-tenant)");
  flag("--proxy-tenant", proxy.tenant, "KOTAE_PROXY_TENANT", "the tenant of the proxy's users");
  flag("--oidc-keys-min-interval", oidc.keys_min_interval_s, "KOTAE_OIDC_KEYS_MIN_INTERVAL",
       "seconds between two fetches of the provider's keys, however many tokens name an unknown key")
      ->check(CLI::Range(0.0, 3600.0));
  flag("--oidc-client-id", oidc.client_id, "KOTAE_OIDC_CLIENT_ID",
       "this server's client id at the provider: the web page signs people in (needs --oidc-redirect-url)");
  flag("--oidc-client-secret-file", oidc.client_secret_file, "KOTAE_OIDC_CLIENT_SECRET_FILE",
       "a file holding the client's secret (or the secret itself in KOTAE_OIDC_CLIENT_SECRET); never logged");
  flag("--oidc-redirect-url", oidc.redirect_url, "KOTAE_OIDC_REDIRECT_URL",
       "this server's /auth/callback as browsers reach it, registered at the provider (https://…/auth/callback)");
  flag("--oidc-scopes", oidc.scopes, "KOTAE_OIDC_SCOPES", "the scopes a sign-in asks for");
  cmd->add_flag("--oidc-auto-sign-in", oidc.auto_sign_in,
                "the web page goes straight to the provider when nobody is signed in (instead of offering \"Sign in\")")
      ->envname("KOTAE_OIDC_AUTO_SIGN_IN");
  flag("--session-idle-minutes", oidc.session_idle_minutes, "KOTAE_SESSION_IDLE_MINUTES",
       "a signed-in session unused this long ends")
      ->check(CLI::Range(1.0, 10080.0));
  flag("--session-max-hours", oidc.session_max_hours, "KOTAE_SESSION_MAX_HOURS",
       "every signed-in session ends this long after sign-in")
      ->check(CLI::Range(0.1, 720.0));
  flag("--session-revalidate-minutes", oidc.session_revalidate_minutes, "KOTAE_SESSION_REVALIDATE_MINUTES",
       "a signed-in person's groups are asked of the provider again this often (0: never)")
      ->check(CLI::Range(0.0, 1440.0));
}

namespace {

// "A=B" → {A, B}; an error naming the flag otherwise.
Result<std::pair<std::string, std::string>> pair_of(const std::string& text, const char* flag) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    return make_error(ErrorCode::invalid_argument, std::string(flag) + " " + text + ": expected NAME=VALUE");
  return std::pair{text.substr(0, equals), text.substr(equals + 1)};
}

}  // namespace

Result<server::auth::GroupRoles> group_roles(const OidcFlags& flags) {
  server::auth::GroupRoles roles;
  for (const auto& entry : flags.group_roles) {
    const auto [group, role] = KOTAE_TRY_VALUE(pair_of(entry, "--group-role"));
    const auto named = server::role_named(role);
    if (!named)
      return make_error(ErrorCode::invalid_argument, "--group-role " + entry + ": reader, editor, owner or admin");
    roles.roles[group] = *named;
  }
  roles.default_role = server::role_named(flags.default_role).value_or(server::Role::reader);
  return roles;
}

Result<std::optional<server::TrustedProxyOptions>> proxy_options(const ProxyFlags& flags, const OidcFlags& people) {
  if (flags.from.empty()) return std::optional<server::TrustedProxyOptions>();
  server::TrustedProxyOptions o;
  for (const auto& cidr : flags.from) {
    const auto range = server::AddressRange::parse(cidr);
    if (!range) return make_error(ErrorCode::invalid_argument, "--trusted-proxy " + cidr + ": not an address or CIDR");
    o.from.push_back(*range);
  }
  auto lower = [](std::string name) {
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name;
  };
  o.user_header = lower(flags.user_header);
  o.email_header = lower(flags.email_header);
  o.name_header = lower(flags.name_header);
  o.groups_header = lower(flags.groups_header);
  o.tenant_header = lower(flags.tenant_header);
  o.tenant = flags.tenant;
  if (o.tenant_header.empty() && !server::valid_tenant(o.tenant))
    return make_error(ErrorCode::invalid_argument, "--trusted-proxy needs --proxy-tenant (or --proxy-tenant-header)");
  o.roles = KOTAE_TRY_VALUE(group_roles(people));
  return std::optional<server::TrustedProxyOptions>(std::move(o));
}

Result<std::optional<server::auth::OpenIdOptions>> oidc_options(const OidcFlags& flags) {
  if (flags.issuer.empty()) return std::optional<server::auth::OpenIdOptions>();
  if (!server::auth::provider_url_allowed(flags.issuer)) {
    return make_error(ErrorCode::invalid_argument,
                      "--oidc-issuer " + flags.issuer + ": must be https:// (or http:// to a loopback address)");
  }
  server::auth::OpenIdOptions o;
  o.issuer = flags.issuer;
  o.audiences = flags.audiences;
  o.claims = {flags.user_claim, flags.name_claim, flags.email_claim, flags.tenant_claim, flags.groups_claim};
  o.tenants.fixed = flags.tenant;
  if (!flags.tenant.empty() && !server::valid_tenant(flags.tenant))
    return make_error(ErrorCode::invalid_argument, "--oidc-tenant: letters, digits, '_' and '-'");
  for (const auto& entry : flags.tenant_map) {
    const auto [value, tenant] = KOTAE_TRY_VALUE(pair_of(entry, "--oidc-tenant-map"));
    if (!server::valid_tenant(tenant))
      return make_error(ErrorCode::invalid_argument,
                        "--oidc-tenant-map " + entry + ": a tenant is letters, digits, '_' and '-'");
    o.tenants.from[value] = tenant;
  }
  if (!o.tenants.from.empty() && flags.tenant_claim.empty())
    return make_error(ErrorCode::invalid_argument, "--oidc-tenant-map needs --oidc-tenant-claim (the claim it maps)");
  o.roles = KOTAE_TRY_VALUE(group_roles(flags));
  o.keys_min_interval = std::chrono::seconds(static_cast<long long>(flags.keys_min_interval_s));
  return std::optional<server::auth::OpenIdOptions>(std::move(o));
}

Result<std::optional<server::SignInOptions>> sign_in_options(const OidcFlags& flags) {
  auto bad = [](const std::string& why) { return make_error(ErrorCode::invalid_argument, why); };
  if (flags.client_id.empty()) {
    if (flags.auto_sign_in) return bad("--oidc-auto-sign-in needs the web page's sign-in: --oidc-client-id");
    return std::optional<server::SignInOptions>();
  }
  if (flags.issuer.empty()) return bad("--oidc-client-id needs --oidc-issuer");
  // https, or http on a loopback address (a server tried on one machine): as the provider's own URLs.
  if (!flags.redirect_url.ends_with("/auth/callback") || !server::auth::provider_url_allowed(flags.redirect_url)) {
    return bad("--oidc-redirect-url: this server's https://…/auth/callback (http only on loopback)");
  }
  server::SignInOptions o;
  o.client_id = flags.client_id;
  o.redirect_url = flags.redirect_url;
  o.scopes = flags.scopes;
  o.auto_sign_in = flags.auto_sign_in;
  if (!flags.client_secret_file.empty()) {
    std::ifstream in(flags.client_secret_file);
    if (!in) return bad("--oidc-client-secret-file " + flags.client_secret_file + ": cannot be read");
    std::getline(in, o.client_secret);
  } else if (const char* secret = std::getenv("KOTAE_OIDC_CLIENT_SECRET")) {
    o.client_secret = secret;
  }
  if (o.client_secret.empty())
    return bad("--oidc-client-id needs its secret: --oidc-client-secret-file or KOTAE_OIDC_CLIENT_SECRET");
  o.idle = std::chrono::seconds(static_cast<long long>(flags.session_idle_minutes * 60));
  o.max_age = std::chrono::seconds(static_cast<long long>(flags.session_max_hours * 3600));
  o.revalidate = std::chrono::seconds(static_cast<long long>(flags.session_revalidate_minutes * 60));
  return std::optional<server::SignInOptions>(std::move(o));
}

}  // namespace kotae::app
