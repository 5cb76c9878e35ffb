#include "server/web_sessions.h"

#include <nlohmann/json.hpp>

#include "core/base64url.h"
#include "core/log.h"
#include "core/random_id.h"
#include "core/sha256.h"
#include "server/auth/provider_http.h"
#include "server/json_body.h"  // nested_deeper_than

namespace kotae::server {
namespace {

constexpr auto kCacheFor = std::chrono::seconds(5);  // a session ended on another replica ends here within this
constexpr auto kSignInFor = std::chrono::minutes(10);
constexpr std::size_t kMaxCached = 10'000;

// A path of this server to return to after sign-in: "/..." but never "//host" or "/\host" (another
// site), at most 512 bytes, no control characters; anything else is "/".
std::string safe_return(const std::string& path) {
  if (path.empty() || path.size() > 512 || path[0] != '/' || (path.size() > 1 && (path[1] == '/' || path[1] == '\\')))
    return "/";
  for (const unsigned char c : path) {
    if (c < 0x20 || c == 0x7f || c == '\\') return "/";
  }
  return path;
}

std::string hash_of(const std::string& secret) {
  return sha256_hex(secret);
}

// PKCE's S256: base64url of the verifier's SHA-256 (RFC 7636 §4.2).
std::string pkce_challenge(const std::string& verifier) {
  return base64url_encode(sha256_bytes(verifier));
}

// What the store keeps of the person (store::SessionRecord::person).
std::string person_json(const auth::TokenPrincipal& person) {
  const auto& who = person.identity;
  return nlohmann::json{{"user", who.user},
                        {"name", who.name},
                        {"email", who.email},
                        {"groups", who.groups},
                        {"role", name_of(person.role)}}
      .dump();
}

// The provider's answer at its token endpoint, as JSON (an object, or null).
nlohmann::json token_answer(const auth::ProviderResponse& answer) {
  if (nested_deeper_than(answer.body, 16)) return nlohmann::json();
  auto tokens = nlohmann::json::parse(answer.body, nullptr, false);
  return tokens.is_object() ? tokens : nlohmann::json();
}

std::string answer_text(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string cookie_value(std::string_view cookies, std::string_view name) {
  if (cookies.size() > 8192) return "";
  while (!cookies.empty()) {
    const auto end = cookies.find(';');
    auto pair = cookies.substr(0, end);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (const auto equals = pair.find('='); equals != std::string_view::npos && pair.substr(0, equals) == name)
      return std::string(pair.substr(equals + 1));
    if (end == std::string_view::npos) break;
    cookies.remove_prefix(end + 1);
  }
  return "";
}

WebSessions::WebSessions(SignInOptions options, auth::OpenIdProvider& provider,
                         std::shared_ptr<store::SessionStore> store)
    : options_(std::move(options)),
      provider_(provider),
      store_(std::move(store)),
      seal_(options_.client_secret, "refresh token") {
  if (options_.revalidate.count() > 0)
    revalidator_ = std::jthread([this](const std::stop_token& stop) { revalidate_queued(stop); });
}

WebSessions::~WebSessions() {
  revalidator_.request_stop();
  wake_.notify_all();
}

std::string WebSessions::cookie(const char* name, const std::string& value, std::chrono::seconds max_age) const {
  // HttpOnly: no script reads it; SameSite=Lax: a cross-site POST does not carry it; Secure over https.
  return std::string(name) + "=" + value +
         "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" + std::to_string(max_age.count()) +
         (options_.secure_cookies() ? "; Secure" : "");
}

std::string WebSessions::expired_cookie(const char* name) const {
  return cookie(name, "", std::chrono::seconds(0));
}

Result<WebSessions::Redirect> WebSessions::begin(const std::string& return_to) {
  const auto endpoints = KOTAE_TRY_VALUE(provider_.endpoints());
  const std::string state = random_id(""), nonce = random_id(""), verifier = random_id("") + random_id("");
  store::SignInRecord record{hash_of(state), nonce, verifier, safe_return(return_to), unix_seconds()};
  KOTAE_TRY(store_->begin_sign_in(record));
  const std::string query = auth::form_encode({{"response_type", "code"},
                                               {"client_id", options_.client_id},
                                               {"redirect_uri", options_.redirect_url},
                                               {"scope", options_.scopes},
                                               {"state", state},
                                               {"nonce", nonce},
                                               {"code_challenge", pkce_challenge(verifier)},
                                               {"code_challenge_method", "S256"}});
  const char separator = endpoints.authorization.find('?') == std::string::npos ? '?' : '&';
  return Redirect{endpoints.authorization + separator + query,
                  cookie(kSignInCookie, state, std::chrono::duration_cast<std::chrono::seconds>(kSignInFor))};
}

Result<WebSessions::SignedIn> WebSessions::finish(const std::string& code, const std::string& state,
                                                  const std::string& browser_state) {
  auto refused = [](const std::string& why) { return make_error(ErrorCode::invalid_argument, why); };
  if (code.empty() || code.size() > 2048 || state.empty() || state.size() > 256)
    return refused("the provider's answer has no usable code and state");
  // The state must be this browser's own (its cookie), and is good once: taking it removes it.
  if (browser_state != state) return refused("this sign-in was not begun in this browser");
  const auto sign_in = KOTAE_TRY_VALUE(store_->take_sign_in(hash_of(state)));
  if (!sign_in) return refused("this sign-in is unknown or was used already (a replayed state)");
  if (unix_seconds() - sign_in->created_at > std::chrono::duration<double>(kSignInFor).count())
    return refused("this sign-in took longer than 10 minutes: sign in again");
  const auto endpoints = KOTAE_TRY_VALUE(provider_.endpoints());
  auth::ProviderRequest exchange{endpoints.token,
                                 auth::form_encode({{"grant_type", "authorization_code"},
                                                    {"code", code},
                                                    {"redirect_uri", options_.redirect_url},
                                                    {"code_verifier", sign_in->code_verifier}}),
                                 options_.client_id,
                                 options_.client_secret,
                                 256 * 1024,
                                 provider_.options().timeout_ms};
  const auto answer = KOTAE_TRY_VALUE(auth::call_provider(exchange));
  const auto tokens = token_answer(answer);
  const std::string id_token = answer_text(tokens, "id_token");
  if (answer.status != 200 || id_token.empty()) {
    return refused("the provider did not exchange the code (" + std::to_string(answer.status) + " " +
                   answer_text(tokens, "error").substr(0, 100) + ")");
  }
  const auto person = KOTAE_TRY_VALUE(provider_.verify_id_token(id_token, options_.client_id, sign_in->nonce));
  // A new id, whatever cookie came with the callback: a session fixed beforehand is never this one.
  const std::string id = random_id("") + random_id("");
  const double now = unix_seconds();
  store::SessionRecord record;
  record.id_hash = hash_of(id);
  record.tenant = person.identity.tenant;
  record.person = person_json(person);
  record.csrf = random_id("");
  record.id_token = id_token;
  record.created_at = record.last_seen = record.checked_at = now;
  record.expires_at = now + static_cast<double>(options_.max_age.count());
  record.refresh_token = seal_.seal(answer_text(tokens, "refresh_token"));
  KOTAE_TRY(store_->create(record));
  auto session = KOTAE_TRY_VALUE(find(id));
  if (!session) return make_error(ErrorCode::internal, "the new session could not be read back");
  return SignedIn{sign_in->return_to, cookie(kSessionCookie, id, options_.max_age), std::move(session->principal)};
}

Result<std::optional<WebSession>> WebSessions::find(const std::string& session_id) {
  if (session_id.empty() || session_id.size() > 128) return std::optional<WebSession>();
  const std::string id_hash = hash_of(session_id);
  const auto now = std::chrono::steady_clock::now();
  trim_now_and_then(now);
  {
    std::lock_guard lock(mutex_);
    if (const auto it = cache_.find(id_hash); it != cache_.end() && now - it->second.read < kCacheFor) {
      if (!it->second.session || it->second.session->expires_at > unix_seconds()) return it->second.session;
    }
  }
  const auto stored = KOTAE_TRY_VALUE(store_->get(id_hash));
  std::optional<WebSession> session;
  const double t = unix_seconds();
  if (stored && stored->expires_at > t && stored->last_seen + static_cast<double>(options_.idle.count()) > t) {
    const auto person = nlohmann::json::parse(stored->person, nullptr, false);
    if (person.is_object()) {
      Principal who;
      who.tenant = stored->tenant;
      who.actor = "user:" + person.value("user", "");
      who.name = person.value("name", "");
      who.role = role_named(person.value("role", "reader")).value_or(Role::reader);
      who.groups = person.value("groups", std::vector<std::string>{});
      who.via = "session";
      who.session = id_hash;
      who.email = person.value("email", "");
      session = WebSession{id_hash, std::move(who), stored->csrf, stored->expires_at};
      // Idle time counts from the last use, written at most once a minute.
      if (t - stored->last_seen > 60) (void)store_->touch(id_hash, t);
      const auto every = static_cast<double>(options_.revalidate.count());
      if (every > 0 && !stored->refresh_token.empty() && t - stored->checked_at >= every) queue_revalidation(id_hash);
    }
  }
  std::lock_guard lock(mutex_);
  if (cache_.size() >= kMaxCached) cache_.clear();
  cache_[id_hash] = {session, now};
  return session;
}

void WebSessions::forget(const std::string& id_hash) {
  std::lock_guard lock(mutex_);
  cache_.erase(id_hash);
}

void WebSessions::queue_revalidation(const std::string& id_hash) {
  {
    std::lock_guard lock(mutex_);
    if (due_.size() >= kMaxCached) return;  // the next read asks again
    due_.insert(id_hash);
  }
  wake_.notify_one();
}

void WebSessions::revalidate_queued(const std::stop_token& stop) {
  while (true) {
    std::string id_hash;
    {
      std::unique_lock lock(mutex_);
      if (!wake_.wait(lock, stop, [this] { return !due_.empty(); })) return;
      id_hash = due_.extract(due_.begin()).value();
    }
    if (auto done = revalidate(id_hash); !done) {
      // The provider unreachable: the session stands as it was, and is asked about again after the
      // next `revalidate` (a provider outage signs nobody out).
      log_event("session_not_revalidated", {{"session", id_hash.substr(0, 12)}, {"reason", done.error().message}},
                LogLevel::warn);
    }
  }
}

Result<void> WebSessions::revalidate(const std::string& id_hash) {
  const double now = unix_seconds();
  const auto every = static_cast<double>(options_.revalidate.count());
  if (!KOTAE_TRY_VALUE(store_->claim_check(id_hash, now, now - every))) return {};  // done since, here or elsewhere
  const auto stored = KOTAE_TRY_VALUE(store_->get(id_hash));
  if (!stored) return {};
  const auto person = nlohmann::json::parse(stored->person, nullptr, false);
  const std::string user = person.is_object() ? person.value("user", "") : "";
  auto end_it = [&](const std::string& why) -> Result<void> {
    KOTAE_TRY(store_->remove(id_hash));
    forget(id_hash);
    if (on_revalidated_) on_revalidated_(stored->tenant, "user:" + user, "auth.session_end", why);
    return {};
  };
  const auto refresh_token = seal_.open(stored->refresh_token);
  if (!refresh_token) return end_it("its refresh token cannot be opened (the client's secret changed)");
  const auto endpoints = KOTAE_TRY_VALUE(provider_.endpoints());
  auth::ProviderRequest refresh{
      endpoints.token,    auth::form_encode({{"grant_type", "refresh_token"}, {"refresh_token", *refresh_token}}),
      options_.client_id, options_.client_secret,
      256 * 1024,         provider_.options().timeout_ms};
  const auto answer = KOTAE_TRY_VALUE(auth::call_provider(refresh));
  const auto tokens = token_answer(answer);
  if (answer.status == 400 || answer.status == 401) {
    // invalid_grant and its kin: the provider no longer vouches for this person here.
    return end_it("the provider refused its refresh (" + answer_text(tokens, "error").substr(0, 100) + ")");
  }
  if (answer.status != 200 || tokens.is_null())
    return make_error(ErrorCode::unavailable, "the provider answered " + std::to_string(answer.status));
  std::string next_person = stored->person;
  if (const auto id_token = answer_text(tokens, "id_token"); !id_token.empty()) {
    const auto now_person = provider_.verify_refreshed_id_token(id_token, options_.client_id);
    if (!now_person) {
      if (now_person.error().code == ErrorCode::invalid_argument) return end_it(now_person.error().message);
      return now_person.error();
    }
    if (user.empty() || now_person->identity.user != user || now_person->identity.tenant != stored->tenant)
      return end_it("the provider's refreshed ID token names another person or tenant");
    next_person = person_json(*now_person);
  }
  // A provider that rotates refresh tokens sends the next one; one that does not keeps the first.
  const std::string next_refresh = answer_text(tokens, "refresh_token");
  KOTAE_TRY(store_->revalidated(id_hash, next_person,
                                next_refresh.empty() ? stored->refresh_token : seal_.seal(next_refresh)));
  forget(id_hash);
  if (next_person != stored->person && on_revalidated_)
    on_revalidated_(stored->tenant, "user:" + user, "auth.session_change", "the provider changed their groups");
  return {};
}

void WebSessions::trim_now_and_then(std::chrono::steady_clock::time_point now) {
  {
    std::lock_guard lock(mutex_);
    if (now - last_trim_ < std::chrono::minutes(10)) return;
    last_trim_ = now;
  }
  const double t = unix_seconds();
  const double idle = static_cast<double>(options_.idle.count());
  if (auto trimmed = store_->trim(t, t - idle, t - std::chrono::duration<double>(kSignInFor).count()); !trimmed)
    log_event("sessions_not_trimmed", {{"reason", trimmed.error().message}}, LogLevel::warn);
}

Result<std::string> WebSessions::end(const WebSession& session, const std::string& post_logout_url) {
  auto stored = KOTAE_TRY_VALUE(store_->get(session.id_hash));
  KOTAE_TRY(store_->remove(session.id_hash));
  {
    std::lock_guard lock(mutex_);
    cache_.erase(session.id_hash);
  }
  const auto endpoints = provider_.endpoints();
  if (!endpoints || endpoints->end_session.empty()) return std::string();
  std::vector<std::pair<std::string, std::string>> query{{"client_id", options_.client_id}};
  if (stored && !stored->id_token.empty()) query.emplace_back("id_token_hint", stored->id_token);
  if (!post_logout_url.empty()) query.emplace_back("post_logout_redirect_uri", post_logout_url);
  const char separator = endpoints->end_session.find('?') == std::string::npos ? '?' : '&';
  return endpoints->end_session + separator + auth::form_encode(query);
}

}  // namespace kotae::server
