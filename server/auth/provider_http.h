#pragma once
// Kotae's calls to an OpenID provider (discovery, JWKS, the token endpoint), through libcurl: only
// https, or plain http to a loopback address (a provider on the same machine, the tests'); no
// redirects followed; a body larger than `max_bytes` or slower than the timeout is an error, so a
// provider that misbehaves cannot hold a server thread or fill its memory.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace kotae::server::auth {

struct ProviderResponse {
  long status = 0;
  std::string body;
};

struct ProviderRequest {
  std::string url;
  std::string form;                        // non-empty: POSTed as application/x-www-form-urlencoded
  std::string basic_user, basic_password;  // HTTP basic authentication when basic_user is set
  std::size_t max_bytes = 256 * 1024;
  long timeout_ms = 5000;
};

// Whether Kotae may call this URL of a provider: https://…, or http:// to 127.0.0.0/8, [::1] or localhost.
bool provider_url_allowed(const std::string& url);

// unavailable when the provider cannot be reached in time; invalid_argument for a URL not allowed.
Result<ProviderResponse> call_provider(const ProviderRequest& request);

// application/x-www-form-urlencoded: each name and value percent-encoded, joined by '&'.
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace kotae::server::auth
