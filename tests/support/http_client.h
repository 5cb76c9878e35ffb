#pragma once
// A small blocking HTTP client for tests (libcurl): one request, the whole response.

#include <map>
#include <string>
#include <vector>

namespace kotae::testing {

struct HttpReply {
  long status = 0;  // 0: no response (the error says why)
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string error;
};

HttpReply http_request(const std::string& method, const std::string& url, const std::string& body = "",
                       const std::vector<std::string>& headers = {"Content-Type: application/json"}, long timeout_s = 60);

// "event: NAME\ndata: ...\n\n" blocks of a text/event-stream body, in order, as (name, data).
std::vector<std::pair<std::string, std::string>> parse_events(const std::string& body);

}  // namespace kotae::testing
