#pragma once
// Who may reach the server from a browser. Without API keys a server on a developer's laptop is a
// target for every page its user visits: a page can post to 127.0.0.1 without asking (text/plain and
// form posts need no CORS preflight), and DNS rebinding lets a foreign name resolve to 127.0.0.1. So in
// open mode on a loopback address only loopback Host names are served, and a request carrying an
// Origin other than the page's own is refused. CORS stays closed unless --cors-origin lists origins;
// those get Access-Control-Allow-Origin and their preflights answered, in any mode.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http_message.h"

namespace kotae::server {

// Whether a request's Origin ("https://kotae.example.com") is the server's own as its Host header names
// it (the scheme aside: a proxy in front may end TLS).
bool same_origin(std::string_view origin, std::string_view host);

class OriginPolicy {
 public:
  OriginPolicy() = default;
  // `open`: no API keys; `loopback`: listening on a loopback address; `cors_origins`: e.g. "https://app.example".
  OriginPolicy(bool open, bool loopback, std::vector<std::string> cors_origins);

  // The refusal (403) of a request from where it may not come, or nullopt.
  std::optional<HttpResponse> check(const HttpRequest& head) const;
  // The reply to a CORS preflight from a listed origin (204), or nullopt when the request is not one.
  std::optional<HttpResponse> preflight(const HttpRequest& head) const;
  // Headers every response to this request carries: Access-Control-Allow-Origin for a listed origin.
  std::vector<std::pair<std::string, std::string>> response_headers(const HttpRequest& head) const;

 private:
  bool listed(std::string_view origin) const;

  bool open_ = false;
  bool loopback_hosts_only_ = false;
  std::vector<std::string> cors_origins_;
};

// "localhost", "127.0.0.1:8080", "[::1]:8080", "foo.localhost" ... (a Host header's value).
bool is_loopback_host(std::string_view host);

}  // namespace kotae::server
