#pragma once
// A small blocking HTTP client for tests (libcurl): one request, the whole response.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kotae::testing {

struct HttpReply {
  long status = 0;  // 0: no response (the error says why)
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string error;
};

HttpReply http_request(const std::string& method, const std::string& url, const std::string& body = "",
                       const std::vector<std::string>& headers = {"Content-Type: application/json"},
                       long timeout_s = 60);

// The same, calling `on_data` with the body received so far each time more arrives (streams: act
// while the response is still coming).
HttpReply http_request_watching(const std::string& method, const std::string& url, const std::string& body,
                                const std::function<void(const std::string& so_far)>& on_data, long timeout_s = 60);

// "event: NAME\ndata: ...\n\n" blocks of a text/event-stream body, in order, as (name, data).
std::vector<std::pair<std::string, std::string>> parse_events(const std::string& body);

}  // namespace kotae::testing
