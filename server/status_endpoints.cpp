#include "server/status_endpoints.h"

namespace kotae::server {

Result<std::unique_ptr<HttpServer>> serve_status(const std::string& host, unsigned short port,
                                                 std::function<bool()> ready, std::function<std::string()> metrics) {
  HttpServerOptions http;
  http.host = host;
  http.port = port;
  http.io_threads = 1;
  http.max_body_bytes = 0;
  http.max_connections = 64;
  auto handle = [ready = std::move(ready), metrics = std::move(metrics)](const HttpRequest& request,
                                                                         const std::shared_ptr<Responder>& responder) {
    HttpResponse response;
    response.content_type = "text/plain; charset=utf-8";
    if (request.method != "GET") {
      response.status = 405;
      response.body = "GET only\n";
    } else if (request.path == "/healthz") {
      response.body = "ok\n";
    } else if (request.path == "/readyz") {
      const bool now = ready();
      response.status = now ? 200 : 503;
      response.body = now ? "ready\n" : "cannot reach what it needs (the queue; the store)\n";
    } else if (request.path == "/metrics") {
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = metrics();
    } else {
      response.status = 404;
      response.body = "not found: /healthz, /readyz, /metrics\n";
    }
    responder->send(std::move(response));
  };
  return HttpServer::start(http, std::move(handle));
}

}  // namespace kotae::server
