#pragma once
// Sign-in for the web page with the OpenID provider (authorization code flow with PKCE, `state` and
// `nonce`), and the server-side sessions it opens (store/session_store.h, so every replica knows
// them): the cookie holds a random id, the store its SHA-256. Sessions end when idle, at an absolute
// bound, and at sign-out. A state is bound to the browser that began the sign-in (a cookie of its
// own) and good once; a session id is always new at sign-in, so a cookie planted before it is never
// the session's. Every `revalidate` the person is asked of the provider again with the session's
// refresh token (kept sealed in the store), on a thread of its own: their groups and role follow the
// provider's, and a session the provider no longer refreshes (signed out there, disabled, removed)
// ends.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/result.h"
#include "server/auth/openid_provider.h"
#include "server/auth/secret_seal.h"
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
  std::chrono::seconds revalidate{300};     // the person asked of the provider again this often (0: never)
  bool auto_sign_in = false;                // the page goes to the provider by itself (/auth/config says so)
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
  ~WebSessions();
  WebSessions(const WebSessions&) = delete;
  WebSessions& operator=(const WebSessions&) = delete;

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
  // session's cookie, where to go, and who signed in.
  struct SignedIn {
    std::string location;
    std::string cookie;
    Principal principal;
  };
  Result<SignedIn> finish(const std::string& code, const std::string& state, const std::string& browser_state);
  // The session a cookie's id names, while it lasts (read through a cache of a few seconds). One due
  // for revalidation is queued for it; this request goes on as the session stood.
  Result<std::optional<WebSession>> find(const std::string& session_id);
  // Asks the provider about the session's person now, unless another replica did since `revalidate`:
  // their groups and role replaced, or the session ended when the provider refuses its refresh token.
  // (The revalidation thread calls it; public for tests.)
  Result<void> revalidate(const std::string& id_hash);
  // Told of each session revalidation changed or ended: (tenant, actor, what happened, why).
  using Revalidated = std::function<void(const std::string&, const std::string&, const char*, const std::string&)>;
  void on_revalidated(Revalidated tell) { on_revalidated_ = std::move(tell); }
  // Ends it; the provider's end-session URL to go on to (empty when it has none).
  Result<std::string> end(const WebSession& session, const std::string& post_logout_url);
  // A Set-Cookie value that removes `name`.
  std::string expired_cookie(const char* name) const;

 private:
  std::string cookie(const char* name, const std::string& value, std::chrono::seconds max_age) const;
  // Ended sessions and abandoned sign-ins removed from the store, at most every ten minutes.
  void trim_now_and_then(std::chrono::steady_clock::time_point now);
  void queue_revalidation(const std::string& id_hash);
  void revalidate_queued(const std::stop_token& stop);
  void forget(const std::string& id_hash);  // out of this replica's cache

  SignInOptions options_;
  auth::OpenIdProvider& provider_;
  std::shared_ptr<store::SessionStore> store_;
  auth::SecretSeal seal_;  // refresh tokens, under the client's secret
  Revalidated on_revalidated_;
  std::mutex mutex_;  // guards the cache and the queue
  struct Cached {
    std::optional<WebSession> session;
    std::chrono::steady_clock::time_point read;
  };
  std::unordered_map<std::string, Cached> cache_;  // by id_hash
  std::chrono::steady_clock::time_point last_trim_{};
  std::set<std::string> due_;  // sessions to revalidate, by id_hash
  std::condition_variable_any wake_;
  std::jthread revalidator_;  // last: stopped and joined before the rest is destroyed
};

// The value of cookie `name` in a Cookie header, or "".
std::string cookie_value(std::string_view cookies, std::string_view name);

}  // namespace kotae::server
