#include "server/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "server/api_error.h"
#include "server/url.h"

namespace kotae::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr std::chrono::seconds kWriteTimeout{60};
constexpr std::size_t kHeaderLimit = 64 * 1024;
// The read buffer holds a header and what arrives behind it; a chunk-size line, its extensions or the
// trailers that do not fit are malformed (Beast 1.81 bounds none of them itself).
constexpr std::size_t kReadBufferLimit = 256 * 1024;
constexpr std::size_t kMaxChunkExtensionBytes = 1024;
constexpr std::size_t kMaxChunks = 1 << 17;  // a 64 MiB upload in 512-byte chunks

std::string serialize(const http::response<http::string_body>& message) {
  std::ostringstream out;
  out << message;
  return out.str();
}

std::string error_body(std::string_view code, std::string_view message) {
  return error_envelope({0, std::string(code), std::string(message)}).dump();
}

}  // namespace

// Counts a connection against the caps while it is open (the Session holds it).
class ConnectionSlot {
 public:
  ConnectionSlot(std::shared_ptr<HttpServerState> server, std::string address);
  ~ConnectionSlot();
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
  const std::string& address() const { return address_; }

 private:
  std::shared_ptr<HttpServerState> server_;
  std::string address_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HttpServerState> server, std::unique_ptr<ConnectionSlot> slot);
  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }
  void close_if_idle() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->busy_) self->close();
    });
  }
  void close_now() {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
  }
  // Any thread. `last` ends the current response.
  void write(std::string bytes, bool last) {
    net::post(stream_.get_executor(), [self = shared_from_this(), bytes = std::move(bytes), last]() mutable {
      self->enqueue(std::move(bytes), last);
    });
  }
  // Any thread. A write failed, or the client closed its end while its request is being answered (a
  // look at the socket: nothing is read from it).
  bool gone() const;
  bool keep_alive() const { return keep_alive_; }

 private:
  void read_header();
  void on_header(beast::error_code ec);
  void read_body();
  void on_body(beast::error_code ec);
  void dispatch_request();
  void reject(http::status status, std::string_view code, std::string_view message);
  void refuse(HttpResponse response);
  void enqueue(std::string bytes, bool last);
  void write_next();
  void complete_request();
  void close();

  beast::tcp_stream stream_;
  std::shared_ptr<HttpServerState> server_;
  std::unique_ptr<ConnectionSlot> slot_;
  beast::flat_buffer buffer_{kReadBufferLimit};
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest head_;  // the request being read: line and headers first, the body once read
  std::size_t chunks_ = 0;
  std::function<void(std::uint64_t, std::string_view, beast::error_code&)> on_chunk_header_;
  struct Pending {
    std::string bytes;
    bool last;
  };
  std::deque<Pending> outbox_;
  bool writing_ = false;
  bool busy_ = false;  // a request is being answered
  bool keep_alive_ = true;
  bool closed_ = false;
  std::atomic<bool> gone_{false};
  mutable std::mutex
      socket_mutex_;  // held by gone()'s look and by close(), so the look never meets a reused descriptor
};

class HttpServerState : public std::enable_shared_from_this<HttpServerState> {
 public:
  HttpServerOptions options;
  RequestHandler handler;
  AdmissionCheck admit;
  net::io_context io;
  tcp::acceptor acceptor{io};
  net::steady_timer accept_backoff{io};
  std::chrono::milliseconds backoff{0};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work{io.get_executor()};
  std::vector<std::thread> threads;
  std::atomic<int> running_threads{0};
  std::atomic<std::size_t> in_flight{0};
  std::atomic<bool> stopping{false};
  std::mutex sessions_mutex;
  std::list<std::weak_ptr<Session>> sessions;
  std::mutex connections_mutex;  // apart from sessions_mutex: a Session may end while that one is held
  std::size_t connections = 0;
  std::map<std::string, std::size_t> per_client;

  void accept() {
    acceptor.async_accept(net::make_strand(io), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == net::error::operation_aborted || !self->acceptor.is_open()) return;
        return self->accept_later();  // e.g. too many open files: keep serving the connections we have
      }
      self->backoff = std::chrono::milliseconds(0);
      beast::error_code address_error;
      const auto remote = socket.remote_endpoint(address_error);
      auto slot = self->take_slot(address_error ? std::string() : remote.address().to_string());
      if (!slot) {
        socket.close(address_error);  // over a cap: closed before a byte is read
        return self->accept();
      }
      auto session = std::make_shared<Session>(std::move(socket), self, std::move(slot));
      {
        std::lock_guard lock(self->sessions_mutex);
        std::erase_if(self->sessions, [](const auto& s) { return s.expired(); });
        self->sessions.push_back(session);
      }
      session->start();
      self->accept();
    });
  }

  // After a failed accept the same failure would come back at once (EMFILE leaves the connection
  // pending): wait, 10 ms doubling to a second, instead of spinning.
  void accept_later() {
    backoff = std::clamp(backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
    accept_backoff.expires_after(backoff);
    accept_backoff.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && self->acceptor.is_open()) self->accept();
    });
  }

  std::unique_ptr<ConnectionSlot> take_slot(const std::string& address) {
    {
      std::lock_guard lock(connections_mutex);
      auto& from_client = per_client[address];
      if (connections >= options.max_connections || from_client >= options.max_connections_per_client) {
        if (from_client == 0) per_client.erase(address);
        return nullptr;
      }
      ++connections;
      ++from_client;
    }
    return std::make_unique<ConnectionSlot>(shared_from_this(), address);
  }
};

ConnectionSlot::ConnectionSlot(std::shared_ptr<HttpServerState> server, std::string address)
    : server_(std::move(server)), address_(std::move(address)) {}

ConnectionSlot::~ConnectionSlot() {
  std::lock_guard lock(server_->connections_mutex);
  --server_->connections;
  if (auto it = server_->per_client.find(address_); it != server_->per_client.end() && --it->second == 0) {
    server_->per_client.erase(it);
  }
}

namespace {

// Sends through a Session; answers 500 if dropped without answering (a handler bug must not leave the
// client waiting).
class SessionResponder final : public Responder {
 public:
  explicit SessionResponder(std::shared_ptr<Session> session) : session_(std::move(session)) {}
  ~SessionResponder() override {
    if (!started_)
      send({500, "application/json", error_body("internal", "the request was dropped without an answer"), {}});
    else if (streaming_ && !ended_)
      end_events();
  }

  void send(HttpResponse response) override {
    if (started_) return;
    started_ = true;
    http::response<http::string_body> message{static_cast<http::status>(response.status), 11};
    message.set(http::field::server, "kotae");
    if (!response.content_type.empty()) message.set(http::field::content_type, response.content_type);  // none on a 304
    // Each header once (the last given wins), but every cookie: a response may set several.
    for (auto& [name, value] : response.headers) {
      if (beast::iequals(name, "set-cookie")) {
        message.insert(name, value);
      } else {
        message.set(name, value);
      }
    }
    message.keep_alive(session_->keep_alive());
    message.body() = std::move(response.body);
    message.prepare_payload();
    session_->write(serialize(message), true);
  }

  void begin_events(std::vector<std::pair<std::string, std::string>> headers) override {
    if (started_) return;
    started_ = streaming_ = true;
    http::response<http::empty_body> message{http::status::ok, 11};
    message.set(http::field::server, "kotae");
    message.set(http::field::content_type, "text/event-stream");
    message.set(http::field::cache_control, "no-cache");
    message.set("X-Accel-Buffering", "no");  // proxies must not hold events back
    for (auto& [name, value] : headers) message.set(name, value);
    message.keep_alive(session_->keep_alive());
    message.chunked(true);
    std::ostringstream out;
    out << message.base();
    session_->write(out.str(), false);
  }

  bool event(std::string_view name, std::string_view data) override {
    if (!streaming_ || ended_ || session_->gone()) return false;
    std::string payload;
    if (!name.empty()) payload.append("event: ").append(name).append("\n");
    std::size_t at = 0;
    do {  // each line of the data on a "data:" line of its own
      const auto end = data.find('\n', at);
      payload.append("data: ").append(data.substr(at, end == std::string_view::npos ? end : end - at)).append("\n");
      at = end == std::string_view::npos ? data.size() + 1 : end + 1;
    } while (at <= data.size());
    payload.append("\n");
    std::ostringstream chunk;
    chunk << std::hex << payload.size() << "\r\n" << payload << "\r\n";
    session_->write(chunk.str(), false);
    return true;
  }

  void end_events() override {
    if (!streaming_ || ended_) return;
    ended_ = true;
    session_->write("0\r\n\r\n", true);
  }

  bool client_gone() const override { return session_->gone(); }

 private:
  std::shared_ptr<Session> session_;
  bool started_ = false, streaming_ = false, ended_ = false;
};

// The request line and headers, for admission; the body joins it once read.
HttpRequest request_head(const http::request<http::string_body>& message, std::string remote) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  const std::string_view target = message.target();
  const auto question = target.find('?');
  request.path = percent_decode(target.substr(0, question), false);
  if (question != std::string_view::npos) request.query = parse_query(target.substr(question + 1));
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  request.remote_address = std::move(remote);
  return request;
}

}  // namespace

Session::Session(tcp::socket socket, std::shared_ptr<HttpServerState> server, std::unique_ptr<ConnectionSlot> slot)
    : stream_(std::move(socket)), server_(std::move(server)), slot_(std::move(slot)) {
  on_chunk_header_ = [this](std::uint64_t, std::string_view extensions, beast::error_code& ec) {
    if (extensions.size() > kMaxChunkExtensionBytes || ++chunks_ > kMaxChunks) ec = http::error::bad_chunk_extension;
  };
}

bool Session::gone() const {
  if (gone_.load()) return true;
  std::lock_guard lock(socket_mutex_);
  if (closed_) return true;
  char byte = 0;
  const auto peeked =
      ::recv(const_cast<tcp::socket&>(stream_.socket()).native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void Session::read_header() {
  if (closed_) return;
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(server_->options.max_body_bytes);
  parser_->on_chunk_header(on_chunk_header_);
  chunks_ = 0;
  stream_.expires_after(server_->options.idle_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void Session::on_header(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    return reject(
        http::status::payload_too_large, "payload_too_large",
        "the request body is larger than the limit of " + std::to_string(server_->options.max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit)
    return reject(http::status::request_header_fields_too_large, "headers_too_large",
                  "the request headers are too large");
  if (ec) {
    if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
        ec != http::error::end_of_stream) {
      return reject(http::status::bad_request, "bad_request", "malformed HTTP request");
    }
    return close();
  }
  const auto& header = parser_->get();
  head_ = request_head(header, slot_->address());
  std::size_t limit = server_->options.max_body_bytes;
  if (server_->admit) {
    auto admission = server_->admit(head_);
    if (admission.answer) return refuse(std::move(*admission.answer));
    limit = std::min(limit, admission.body_limit);
  }
  if (const auto length = parser_->content_length(); length && *length > limit) {
    return reject(http::status::payload_too_large, "payload_too_large",
                  "the request body is larger than this endpoint's limit of " + std::to_string(limit) + " bytes");
  }
  parser_->body_limit(limit);  // a chunked body is counted as it arrives
  if (beast::iequals(header[http::field::expect], "100-continue")) {
    auto reply = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
    stream_.expires_after(kWriteTimeout);
    return net::async_write(stream_, net::buffer(*reply),
                            [self = shared_from_this(), reply](beast::error_code e, std::size_t) {
                              if (e) return self->close();
                              self->read_body();
                            });
  }
  read_body();
}

void Session::read_body() {
  if (parser_->is_done()) return dispatch_request();
  stream_.expires_after(server_->options.idle_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_body(ec); });
}

void Session::on_body(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    return reject(
        http::status::payload_too_large, "payload_too_large",
        "the request body is larger than the limit of " + std::to_string(server_->options.max_body_bytes) + " bytes");
  }
  if (ec) {
    if (ec.category() == http::make_error_code(http::error::end_of_stream).category())
      return reject(http::status::bad_request, "bad_request", "malformed HTTP request body");
    return close();
  }
  dispatch_request();
}

void Session::dispatch_request() {
  auto message = parser_->release();
  keep_alive_ = message.keep_alive() && !server_->stopping;
  busy_ = true;
  ++server_->in_flight;
  stream_.expires_never();  // the handler may take long (a streamed answer); writes set their own deadline
  head_.body = std::move(message.body());
  auto responder = std::make_shared<SessionResponder>(shared_from_this());
  try {
    server_->handler(std::move(head_), responder);
  } catch (const std::exception& e) {
    responder->send({500, "application/json", error_body("internal", "the server failed to handle the request"), {}});
  }
}

void Session::reject(http::status status, std::string_view code, std::string_view message) {
  refuse({static_cast<int>(status), "application/json", error_body(code, message), {}});
}

void Session::refuse(HttpResponse refusal) {
  // The rest of the request is not read: answer and close.
  keep_alive_ = false;
  busy_ = true;
  ++server_->in_flight;
  http::response<http::string_body> response{static_cast<http::status>(refusal.status), 11};
  response.set(http::field::server, "kotae");
  response.set(http::field::content_type, refusal.content_type);
  for (auto& [name, value] : refusal.headers) response.set(name, value);
  response.keep_alive(false);
  response.body() = std::move(refusal.body);
  response.prepare_payload();
  enqueue(serialize(response), true);
}

void Session::enqueue(std::string bytes, bool last) {
  if (closed_ || gone_) {
    if (last) complete_request();
    return;
  }
  outbox_.push_back({std::move(bytes), last});
  if (!writing_) write_next();
}

void Session::write_next() {
  writing_ = true;
  stream_.expires_after(kWriteTimeout);
  net::async_write(stream_, net::buffer(outbox_.front().bytes),
                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                     self->writing_ = false;
                     if (ec) {
                       self->gone_ = true;
                       bool had_last = false;
                       for (const auto& p : self->outbox_) had_last |= p.last;
                       self->outbox_.clear();
                       self->close();
                       if (had_last) self->complete_request();
                       return;
                     }
                     const bool last = self->outbox_.front().last;
                     self->outbox_.pop_front();
                     if (last) self->complete_request();
                     if (!self->outbox_.empty()) self->write_next();
                   });
}

void Session::complete_request() {
  if (!busy_) return;
  busy_ = false;
  --server_->in_flight;
  if (!closed_ && !gone_ && keep_alive_ && !server_->stopping) return read_header();
  close();
}

void Session::close() {
  std::lock_guard lock(socket_mutex_);
  if (closed_) return;
  closed_ = true;
  gone_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.close();
}

HttpServer::HttpServer(std::shared_ptr<HttpServerState> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() {
  shutdown(std::chrono::milliseconds(0));
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options, RequestHandler handler,
                                                      AdmissionCheck admit) {
  auto state = std::make_shared<HttpServerState>();
  state->options = options;
  state->handler = std::move(handler);
  state->admit = std::move(admit);
  beast::error_code ec;
  const auto address = net::ip::make_address(options.host, ec);
  if (ec) return make_error(ErrorCode::invalid_argument, "'" + options.host + "' is not an IP address to listen on");
  const tcp::endpoint endpoint{address, options.port};
  state->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(endpoint, ec);
  if (!ec) state->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(ErrorCode::io,
                      "cannot listen on " + options.host + ":" + std::to_string(options.port) + ": " + ec.message());
  }
  state->accept();
  for (int i = 0; i < std::max(1, options.io_threads); ++i) {
    ++state->running_threads;
    state->threads.emplace_back([s = state.get()] {
      s->io.run();
      --s->running_threads;
    });
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

unsigned short HttpServer::port() const {
  beast::error_code ec;
  return state_->acceptor.local_endpoint(ec).port();
}

std::size_t HttpServer::in_flight() const {
  return state_->in_flight.load();
}

void HttpServer::stop_accepting() {
  if (state_->stopping.exchange(true)) return;
  net::post(state_->acceptor.get_executor(), [s = state_] {
    beast::error_code ec;
    s->acceptor.close(ec);
    s->accept_backoff.cancel();
  });
  std::lock_guard lock(state_->sessions_mutex);
  for (auto& weak : state_->sessions) {
    if (auto session = weak.lock()) session->close_if_idle();
  }
}

void HttpServer::shutdown(std::chrono::milliseconds deadline) {
  if (state_->threads.empty()) return;
  stop_accepting();
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (state_->in_flight.load() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Close every connection and let the aborted operations finish (they hold the sessions); stop
  // the loop outright only if that takes long.
  {
    std::lock_guard lock(state_->sessions_mutex);
    for (auto& weak : state_->sessions) {
      if (auto session = weak.lock()) session->close_now();
    }
  }
  state_->work.reset();
  const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (state_->running_threads.load() > 0 && std::chrono::steady_clock::now() < grace) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  state_->io.stop();
  for (auto& t : state_->threads) t.join();
  state_->threads.clear();
}

}  // namespace kotae::server
