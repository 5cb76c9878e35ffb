#include "support/http_client.h"

#include <strings.h>

#include <curl/curl.h>

#include <algorithm>
#include <sstream>

namespace kotae::testing {
namespace {

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct Watched {
  std::string* body;
  const std::function<void(const std::string&)>* on_data;
};

std::size_t on_watched_body(char* data, std::size_t size, std::size_t n, void* out) {
  auto* watched = static_cast<Watched*>(out);
  watched->body->append(data, size * n);
  (*watched->on_data)(*watched->body);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* out) {
  std::string line(data, size * n);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * n;
}

HttpReply perform(const std::string& method, const std::string& url, const std::string& body,
                  const std::vector<std::string>& headers, long timeout_s,
                  const std::function<void(const std::string&)>* on_data) {
  HttpReply reply;
  Watched watched{&reply.body, on_data};
  CURL* curl = curl_easy_init();
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  list = curl_slist_append(list, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method != "GET" && method != "HEAD") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  if (on_data != nullptr) {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_watched_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &watched);
  } else {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply.headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_s);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (const CURLcode rc = curl_easy_perform(curl); rc != CURLE_OK) {
    reply.error = curl_easy_strerror(rc);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  return reply;
}

}  // namespace

HttpReply http_request(const std::string& method, const std::string& url, const std::string& body,
                       const std::vector<std::string>& headers, long timeout_s) {
  // A body is JSON unless the caller says otherwise (the server refuses undeclared JSON).
  const bool typed = std::any_of(headers.begin(), headers.end(), [](const std::string& h) {
    return h.size() >= 13 && strncasecmp(h.c_str(), "content-type:", 13) == 0;
  });
  if (body.empty() || typed) return perform(method, url, body, headers, timeout_s, nullptr);
  std::vector<std::string> with_type = headers;
  with_type.push_back("Content-Type: application/json");
  return perform(method, url, body, with_type, timeout_s, nullptr);
}

HttpReply http_request_watching(const std::string& method, const std::string& url, const std::string& body,
                                const std::function<void(const std::string&)>& on_data, long timeout_s) {
  return perform(method, url, body, {"Content-Type: application/json"}, timeout_s, &on_data);
}

std::vector<std::pair<std::string, std::string>> parse_events(const std::string& body) {
  std::vector<std::pair<std::string, std::string>> events;
  std::istringstream in(body);
  std::string line, name, data;
  bool any = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (any) events.emplace_back(name, data);
      name.clear();
      data.clear();
      any = false;
    } else if (line.starts_with("event: ")) {
      name = line.substr(7);
      any = true;
    } else if (line.starts_with("data: ")) {
      if (!data.empty()) data += "\n";
      data += line.substr(6);
      any = true;
    }
  }
  return events;
}

}  // namespace kotae::testing
