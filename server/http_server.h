#pragma once
// The HTTP/1.1 server: Boost.Beast over Asio, a few I/O threads, keep-alive. The I/O threads read and
// parse requests and write responses; they hand each request to `handler`, which must return at once
// (the API posts real work to the work pool). Beast and Asio stay inside http_server.cpp.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/http_message.h"

namespace kotae::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;  // 0: any free port (see HttpServer::port)
  int io_threads = 2;
  std::size_t max_body_bytes = 64u << 20;  // larger bodies are answered 413
  std::chrono::seconds idle_timeout{60};   // a connection waiting this long for a request is closed
};

class HttpServerState;

using RequestHandler = std::function<void(HttpRequest request, std::shared_ptr<Responder> responder)>;

class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options, RequestHandler handler);
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
