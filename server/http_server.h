#pragma once
// The HTTP/1.1 server: Boost.Beast over Asio, a few I/O threads, keep-alive. The I/O threads read and
// parse requests and write responses; they hand each request to `handler`, which must return at once
// (the API posts real work to the work pool). Beast and Asio stay inside http_server.cpp.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/result.h"
#include "server/http_message.h"

namespace kotae::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;  // 0: any free port (see HttpServer::port)
  int io_threads = 2;
  std::size_t max_body_bytes = 64u << 20;        // larger bodies are answered 413
  std::chrono::seconds idle_timeout{60};         // a connection waiting this long for a request (or a body) is closed
  std::size_t max_connections = 1024;            // open at once; more are closed as they arrive
  std::size_t max_connections_per_client = 128;  // from one client address
};

class HttpServerState;

using RequestHandler = std::function<void(HttpRequest request, std::shared_ptr<Responder> responder)>;

// Decided from the request line and headers alone, before a byte of the body is read: an answer (a
// refusal, or a CORS preflight's reply) sent at once, with no 100 Continue and nothing buffered, or the
// largest body this request may have (at most max_body_bytes).
struct Admission {
  std::optional<HttpResponse> answer;  // sent at once instead of reading the body; the connection is then closed
  std::size_t body_limit = 0;
};
using AdmissionCheck = std::function<Admission(const HttpRequest& head)>;

class HttpServer {
 public:
  // Without `admit`, every request is read up to max_body_bytes.
  static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options, RequestHandler handler,
                                                   AdmissionCheck admit = {});
  ~HttpServer();  // stops at once (see shutdown for the graceful way)

  unsigned short port() const;
  // Requests being answered now.
  std::size_t in_flight() const;
  // Stops accepting connections and closes idle ones; requests in flight go on.
  void stop_accepting();
  // Waits up to `deadline` for requests in flight, then closes everything and joins the I/O threads.
  void shutdown(std::chrono::milliseconds deadline);

 private:
  explicit HttpServer(std::shared_ptr<HttpServerState> state);
  std::shared_ptr<HttpServerState> state_;
};

}  // namespace kotae::server
