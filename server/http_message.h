#pragma once
// What the HTTP layer hands to the API and takes back, free of Beast types: a parsed request, a whole
// response, and a Responder that sends either one response or a stream of Server-Sent Events.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kotae::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::map<std::string, std::string> query;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string remote_address;
  std::map<std::string, std::string> path_params;  // filled by the router: {name} segments

  // The first header with this (lower-case) name, or "".
  std::string_view header(std::string_view name) const;
  std::string query_value(const std::string& name, const std::string& fallback = "") const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// One per request; safe to call from any thread. Exactly one of send() or begin_events()...end_events()
// answers the request.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void send(HttpResponse response) = 0;
  // Starts a text/event-stream response; `headers` are added to it.
  virtual void begin_events(std::vector<std::pair<std::string, std::string>> headers = {}) = 0;
  // One event ("event: NAME" when the name is not empty, then "data: ..." lines). False once the
  // client has gone: the producer should stop.
  virtual bool event(std::string_view name, std::string_view data) = 0;
  virtual void end_events() = 0;
  virtual bool client_gone() const = 0;
};

}  // namespace kotae::server
