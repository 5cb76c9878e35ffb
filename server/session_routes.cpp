// The web page's sign-in with the OpenID provider (server/web_sessions.h) and who the caller is:
//   GET  /auth/config     whether the page may offer "Sign in", or go straight to the provider (open)
//   GET  /auth/login      ?return_to=/path: to the provider (302), the state bound to this browser (open)
//   GET  /auth/callback   the provider's answer: a new session's cookie, back to return_to (302) (open)
//   POST /auth/logout     ends the caller's session (and says where the provider's session ends)
//   GET  /v1/me           the caller: name, tenant, role, groups, how they signed in, the CSRF token

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/json_body.h"
#include "server/server_context.h"

namespace kotae::server {
namespace {

HttpResponse redirect(const std::string& location, std::vector<std::string> cookies) {
  HttpResponse response;
  response.status = 302;
  response.content_type = "text/plain; charset=utf-8";
  response.body = "Redirecting\n";
  response.headers.emplace_back("Location", location);
  response.headers.emplace_back("Cache-Control", "no-store");
  for (auto& cookie : cookies) response.headers.emplace_back("Set-Cookie", std::move(cookie));
  return response;
}

WebSessions& sessions_of(ServerContext& context) {
  if (!context.sessions)
    throw ApiError{404, "not_found", "sign-in is not configured on this server (--oidc-client-id)"};
  return *context.sessions;
}

void record_sign_in(ServerContext& context, const Call& call, const char* action, const Principal* who, int status,
                    const std::string& reason) {
  auto event =
      context.audit->call_event(call.request, action, who ? who->tenant : "", who ? who->actor : "anonymous", "");
  event.target = "";
  if (!reason.empty()) event.detail = nlohmann::json{{"reason", reason}}.dump();
  context.audit->finish(std::move(event), status);
}

}  // namespace

void add_session_routes(Router& router, ServerContext& context) {
  router.add("GET", "/auth/config", {.quick = true, .access = Access::open}, [&context](Call& call) {
    const bool auto_sign_in = context.sessions && context.sessions->options().auto_sign_in;
    call.responder->send(json_response(
        200, {{"sign_in", context.sessions != nullptr}, {"auto_sign_in", auto_sign_in}, {"login", "/auth/login"}}));
  });

  router.add("GET", "/auth/login", {.access = Access::open}, [&context](Call& call) {
    auto& sessions = sessions_of(context);
    const auto began = value_or_throw(sessions.begin(call.request.query_value("return_to", "/")));
    call.responder->send(redirect(began.location, {began.cookie}));
  });

  router.add("GET", "/auth/callback", {.access = Access::open}, [&context](Call& call) {
    auto& sessions = sessions_of(context);
    const auto& request = call.request;
    if (const auto error = request.query_value("error"); !error.empty()) {
      record_sign_in(context, call, "auth.sign_in", nullptr, 401, "the provider refused: " + error.substr(0, 100));
      throw ApiError{401, "sign_in_refused", "the provider did not sign you in (" + error.substr(0, 100) + ")"};
    }
    auto finished = sessions.finish(request.query_value("code"), request.query_value("state"),
                                    cookie_value(request.header("cookie"), kSignInCookie));
    if (!finished) {
      record_sign_in(context, call, "auth.sign_in", nullptr, 401, finished.error().message);
      if (finished.error().code == ErrorCode::invalid_argument)
        throw ApiError{401, "sign_in_failed", finished.error().message};
      throw from_error(finished.error());
    }
    record_sign_in(context, call, "auth.sign_in", &finished->principal, 200, "");
    call.responder->send(redirect(finished->location, {finished->cookie, sessions.expired_cookie(kSignInCookie)}));
  });

  router.add("POST", "/auth/logout", [&context](Call& call) {
    auto& sessions = sessions_of(context);
    if (call.who.via != "session")
      throw bad_request("only a signed-in page signs out (an API key or token has no session)");
    auto session = value_or_throw(sessions.find(cookie_value(call.request.header("cookie"), kSessionCookie)));
    std::string end_session;
    if (session) end_session = value_or_throw(sessions.end(*session, call.request.query_value("post_logout_url")));
    record_sign_in(context, call, "auth.sign_out", &call.who, 200, "");
    auto response = json_response(200, {{"signed_out", true}, {"end_session_url", end_session}});
    response.headers.emplace_back("Set-Cookie", sessions.expired_cookie(kSessionCookie));
    call.responder->send(std::move(response));
  });

  // Answered at once, while models still load: the page asks it first.
  router.add("GET", "/v1/me", {.quick = true}, [&context](Call& call) {
    const auto& who = call.who;
    nlohmann::json me{{"object", "principal"}, {"actor", who.actor},    {"name", who.name},
                      {"email", who.email},    {"tenant", call.tenant}, {"role", name_of(who.role)},
                      {"groups", who.groups},  {"via", who.via},        {"sign_in", context.sessions != nullptr}};
    if (who.via == "session" && context.sessions) {
      if (auto session =
              value_or_throw(context.sessions->find(cookie_value(call.request.header("cookie"), kSessionCookie)))) {
        me["csrf_token"] = session->csrf;
        me["expires_at"] = session->expires_at;
      }
    }
    call.responder->send(json_response(200, me));
  });
}

}  // namespace kotae::server
