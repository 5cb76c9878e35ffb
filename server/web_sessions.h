#pragma once
// Sign-in for the web page with the OpenID provider (authorization code flow with PKCE, `state` and
// `nonce`), and the server-side sessions it opens (store/session_store.h, so every replica knows
// them): the cookie holds a random id, the store its SHA-256. Sessions end when idle, at an absolute
// bound, and at sign-out. A state is bound to the browser that began the sign-in (a cookie of its
// own) and good once; a session id is always new at sign-in, so a cookie planted before it is never
// the session's.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/result.h"
#include "server/auth/openid_provider.h"
#include "server/principal.h"
#include "store/session_store.h"

namespace kotae::server {

struct SignInOptions {
  std::string client_id;
  std::string client_secret;  // from a file or the environment; never logged
  std::string redirect_url;   // this server's /auth/callback as the browser reaches it (https://…)
  std::string scopes = "openid profile email";
  std::chrono::seconds idle{3600};          // a session unused this long ends
  std::chrono::seconds max_age{12 * 3600};  // and every session ends this long after sign-in
  bool secure_cookies() const { return redirect_url.starts_with("https://"); }
};

inline constexpr const char* kSessionCookie = "kotae_session";
inline constexpr const char* kSignInCookie = "kotae_sign_in";

// A signed-in person, as a request's cookie names them.
struct WebSession {
  std::string id_hash;
  Principal principal;
  std::string csrf;
  double expires_at = 0;
};

class WebSessions {
 public:
  WebSessions(SignInOptions options, auth::OpenIdProvider& provider, std::shared_ptr<store::SessionStore> store);

  const SignInOptions& options() const { return options_; }

  struct Redirect {
    std::string location;
    std::string cookie;  // a Set-Cookie value
  };
  // The provider's authorization URL for a new sign-in that returns to `return_to` (a path of this
  // server; anything else becomes "/"), and the cookie binding its state to this browser.
  Result<Redirect> begin(const std::string& return_to);
  // The callback: the state must be the browser's and not used before, the code is exchanged at the
  // provider's token endpoint, the ID token checked (issuer, audience, nonce, signature). The new
  // session's cookie, and where to go.
  Result<Redirect> finish(const std::string& code, const std::string& state, const std::string& browser_state);
  // The session a cookie's id names, while it lasts (read through a cache of a few seconds).
  Result<std::optional<WebSession>> find(const std::string& session_id);
  // Ends it; the provider's end-session URL to go on to (empty when it has none).
  Result<std::string> end(const WebSession& session, const std::string& post_logout_url);
  // A Set-Cookie value that removes `name`.
  std::string expired_cookie(const char* name) const;

 private:
  std::string cookie(const char* name, const std::string& value, std::chrono::seconds max_age) const;
  // Ended sessions and abandoned sign-ins removed from the store, at most every ten minutes.
  void trim_now_and_then(std::chrono::steady_clock::time_point now);

  SignInOptions options_;
  auth::OpenIdProvider& provider_;
  std::shared_ptr<store::SessionStore> store_;
  std::mutex mutex_;  // guards the cache
  struct Cached {
    std::optional<WebSession> session;
    std::chrono::steady_clock::time_point read;
  };
  std::unordered_map<std::string, Cached> cache_;  // by id_hash
  std::chrono::steady_clock::time_point last_trim_{};
};

// The value of cookie `name` in a Cookie header, or "".
std::string cookie_value(std::string_view cookies, std::string_view name);

}  // namespace kotae::server
