#include "server/origin_policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "server/api_error.h"

namespace kotae::server {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The host part of a Host header: "[::1]:8080" -> "::1", "localhost:80" -> "localhost".
std::string_view host_name(std::string_view host) {
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    return close == std::string_view::npos ? std::string_view() : host.substr(1, close - 1);
  }
  return host.substr(0, host.find(':'));
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  const std::string name = lower(host_name(host));
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, name.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, name.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

bool same_origin(std::string_view origin, std::string_view host) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.starts_with(scheme)) return !host.empty() && lower(origin.substr(scheme.size())) == lower(host);
  }
  return false;
}

OriginPolicy::OriginPolicy(bool open, bool loopback, std::vector<std::string> cors_origins)
    : open_(open), loopback_hosts_only_(open && loopback), cors_origins_(std::move(cors_origins)) {
  for (auto& origin : cors_origins_) origin = lower(origin);
}

bool OriginPolicy::listed(std::string_view origin) const {
  return std::find(cors_origins_.begin(), cors_origins_.end(), lower(origin)) != cors_origins_.end();
}

std::optional<HttpResponse> OriginPolicy::check(const HttpRequest& head) const {
  const std::string_view host = head.header("host");
  if (loopback_hosts_only_ && !host.empty() && !is_loopback_host(host)) {
    return error_response({403, "forbidden_host",
                           "this server answers only to loopback host names (localhost, "
                           "127.0.0.1, [::1]) without API keys"});
  }
  const std::string_view origin = head.header("origin");
  if (open_ && !origin.empty() && lower(origin) != "http://" + lower(host) && !listed(origin)) {
    return error_response({403, "forbidden_origin",
                           "requests from another site's pages are refused; list the "
                           "site with --cors-origin to allow it"});
  }
  return std::nullopt;
}

std::optional<HttpResponse> OriginPolicy::preflight(const HttpRequest& head) const {
  if (head.method != "OPTIONS" || head.header("access-control-request-method").empty()) return std::nullopt;
  const std::string_view origin = head.header("origin");
  if (!listed(origin))
    return error_response({403, "forbidden_origin", "this origin may not call the API (--cors-origin)"});
  HttpResponse reply{204, "text/plain", "", response_headers(head)};
  reply.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, DELETE");
  reply.headers.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type, X-API-Key, X-Kotae-Tenant");
  reply.headers.emplace_back("Access-Control-Max-Age", "600");
  return reply;
}

std::vector<std::pair<std::string, std::string>> OriginPolicy::response_headers(const HttpRequest& head) const {
  const std::string_view origin = head.header("origin");
  if (origin.empty() || !listed(origin)) return {};
  return {{"Access-Control-Allow-Origin", std::string(origin)}, {"Vary", "Origin"}};
}

}  // namespace kotae::server
