// GET / and /assets/...: the web page, served from the binary. The page holds no data, so it is open
// like /healthz; what it shows comes from the API with the user's key.

#include "server/server_context.h"
#include "server/web_assets.h"

namespace kotae::server {
namespace {

// Only what the page itself ships may run or load; the API is same-origin.
constexpr std::string_view content_security_policy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

bool accepts_gzip(const HttpRequest& request) {
  return request.header("accept-encoding").find("gzip") != std::string_view::npos;
}

HttpResponse asset_response(const WebAsset& asset, const HttpRequest& request) {
  HttpResponse response;
  response.content_type = std::string(asset.content_type);
  response.headers = {
      {"ETag", std::string(asset.etag)},  {"Cache-Control", "no-cache"},  // revalidate: a new build changes the ETag
      {"Vary", "Accept-Encoding"},        {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"}, {"Content-Security-Policy", std::string(content_security_policy)}};
  if (request.header("if-none-match") == asset.etag) {
    response.status = 304;
    return response;
  }
  if (accepts_gzip(request)) {
    response.body = std::string(asset.gzip_body);
    response.headers.emplace_back("Content-Encoding", "gzip");
  } else {
    response.body = std::string(asset.body);
  }
  return response;
}

}  // namespace

void add_web_routes(Router& router) {
  for (const auto& asset : web_assets()) {
    router.add("GET", std::string(asset.path),
               [&asset](Call& call) { call.responder->send(asset_response(asset, call.request)); },
               {.quick = true, .access = Access::open});
  }
}

}  // namespace kotae::server
