#include "server/auth/provider_http.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace kotae::server::auth {
namespace {

bool curl_ready() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return code == CURLE_OK;
}

struct Received {
  std::string body;
  std::size_t max_bytes;
  bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& received = *static_cast<Received*>(user);
  const std::size_t bytes = size * count;
  if (received.body.size() + bytes > received.max_bytes) {
    received.too_large = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  received.body.append(data, bytes);
  return bytes;
}

// The host part of an http(s) URL: between "//" and the next '/', ':' (or ']' for IPv6), '?' or '#'.
std::string host_of(const std::string& url) {
  const auto start = url.find("//");
  if (start == std::string::npos) return "";
  std::size_t from = start + 2;
  if (from < url.size() && url[from] == '[') {
    const auto end = url.find(']', from);
    return end == std::string::npos ? "" : url.substr(from, end - from + 1);
  }
  const auto end = url.find_first_of(":/?#", from);
  return url.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

}  // namespace

bool provider_url_allowed(const std::string& url) {
  if (url.size() > 2048 || url.find_first_of(" \r\n\t\"<>\\") != std::string::npos) return false;
  if (url.starts_with("https://")) return !host_of(url).empty();
  if (!url.starts_with("http://")) return false;
  const std::string host = host_of(url);
  return host == "localhost" || host == "[::1]" || host.starts_with("127.");
}

Result<ProviderResponse> call_provider(const ProviderRequest& request) {
  if (!provider_url_allowed(request.url)) {
    return make_error(
        ErrorCode::invalid_argument,
        "the provider's URL must be https (or http to a loopback address): " + request.url.substr(0, 200));
  }
  if (!curl_ready()) return make_error(ErrorCode::internal, "curl_global_init failed");
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy(curl_easy_init(), &curl_easy_cleanup);
  if (!easy) return make_error(ErrorCode::internal, "curl_easy_init failed");
  CURL* e = easy.get();
  Received received{"", request.max_bytes};
  char message[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // timeouts must not raise SIGALRM in a threaded server
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, request.timeout_ms);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, request.timeout_ms);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "kotae");
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &received);
  if (!request.form.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.form.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.form.size()));
  }
  if (!request.basic_user.empty()) {
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(e, CURLOPT_USERNAME, request.basic_user.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, request.basic_password.c_str());
  }
  const CURLcode code = curl_easy_perform(e);
  if (received.too_large) {
    return make_error(ErrorCode::invalid_argument,
                      "the provider answered more than " + std::to_string(request.max_bytes) + " bytes");
  }
  if (code != CURLE_OK) {
    return make_error(ErrorCode::unavailable,
                      std::string("cannot reach the provider: ") + (message[0] ? message : curl_easy_strerror(code)));
  }
  ProviderResponse response;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(received.body);
  return response;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  auto encode = [](const std::string& text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
        out.push_back(static_cast<char>(c));
      } else {
        out.push_back('%');
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
    }
    return out;
  };
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out.push_back('&');
    out += encode(name) + "=" + encode(value);
  }
  return out;
}

}  // namespace kotae::server::auth
