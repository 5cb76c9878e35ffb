#include "model/openai_chat_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "model/token_estimate.h"

namespace kotae {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

template <auto Free>
struct CurlDeleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using EasyHandle = std::unique_ptr<CURL, CurlDeleter<curl_easy_cleanup>>;
using MultiHandle = std::unique_ptr<CURLM, CurlDeleter<curl_multi_cleanup>>;
using HeaderList = std::unique_ptr<curl_slist, CurlDeleter<curl_slist_free_all>>;

bool curl_ready() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return code == CURLE_OK;
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

std::string snippet(std::string_view text, std::size_t max = 200) {
  std::string out(text.substr(0, max));
  if (text.size() > max) out += "...";
  return out;
}

std::string attempts_text(int attempts) {
  return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         });
}

// Splits a Server-Sent Events stream into the data of its events, as the WHATWG HTML standard reads
// one: lines end in CRLF, LF or CR (also when a chunk boundary falls between CR and LF), the "data"
// lines of one event are joined with '\n', comments (": ping" keep-alives) and other fields are skipped.
class SseDecoder {
 public:
  // Calls on_data(std::string_view) for each complete event; stops and returns false when it does.
  template <class OnData>
  bool feed(std::string_view bytes, OnData&& on_data) {
    while (!bytes.empty()) {
      if (skip_lf_) {
        skip_lf_ = false;
        if (bytes.front() == '\n') {
          bytes.remove_prefix(1);
          continue;
        }
      }
      const std::size_t end = bytes.find_first_of("\r\n");
      if (end == std::string_view::npos) {
        line_.append(bytes);
        return true;
      }
      line_.append(bytes.substr(0, end));
      skip_lf_ = bytes[end] == '\r';
      bytes.remove_prefix(end + 1);
      if (!end_line(on_data)) return false;
    }
    return true;
  }

  // The end of the stream. Unlike a browser, an event not closed by a blank line still counts: a
  // server that closes right after its last line has said all it meant to.
  template <class OnData>
  bool finish(OnData&& on_data) {
    if (!line_.empty() && !end_line(on_data)) return false;
    return end_line(on_data);
  }

 private:
  template <class OnData>
  bool end_line(OnData& on_data) {
    if (line_.empty()) return dispatch(on_data);
    const std::string_view line(line_);
    if (line.front() != ':') {  // ':' starts a comment
      const std::size_t colon = line.find(':');
      std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (line.substr(0, colon) == "data") {
        if (has_data_) data_ += '\n';
        data_.append(value);
        has_data_ = true;
      }
    }
    line_.clear();
    return true;
  }

  template <class OnData>
  bool dispatch(OnData& on_data) {
    if (!has_data_) return true;
    has_data_ = false;
    event_.swap(data_);
    data_.clear();
    return on_data(std::string_view(event_));
  }

  std::string line_;
  std::string data_;
  std::string event_;  // the data being dispatched
  bool has_data_ = false;
  bool skip_lf_ = false;
};

// What a server says went wrong, from an OpenAI-style error ({"error": {"message": ...}}) or the
// shapes other servers use (vLLM: {"message": ...}, FastAPI: {"detail": ...}).
std::string server_message(const json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object()) {
    for (const char* key : {"error", "detail"}) {
      if (auto it = error.find(key); it != error.end()) return server_message(*it);
    }
    if (auto it = error.find("message"); it != error.end() && it->is_string()) return it->get<std::string>();
  }
  return error.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The same from an error answer's body; its raw start when that is not JSON.
std::string server_message_in_body(std::string_view body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) return server_message(parsed);
  return body.empty() ? std::string("(no body)") : snippet(body);
}

std::optional<std::size_t> count_field(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer() || it->get<long long>() < 0) return std::nullopt;
  return static_cast<std::size_t>(it->get<long long>());
}

// One HTTP attempt: the state curl's callbacks fill in.
struct Attempt {
  CURL* easy = nullptr;
  const std::string* endpoint = nullptr;
  const TokenCallback* on_piece = nullptr;

  bool response_started = false;  // any byte of the answer: status line, header or body
  Clock::time_point last_byte;
  long status = 0;
  std::optional<long> retry_after_s;
  std::string error_body;  // the body of a non-2xx answer, capped
  std::string head;        // the first bytes of a 2xx body, to show when it is not an event stream

  SseDecoder sse;
  bool saw_event = false;
  bool done = false;  // "data: [DONE]"
  bool cancelled = false;
  std::optional<Error> stream_error;

  std::string text;
  std::size_t pieces = 0;
  std::string finish_reason;
  std::optional<Clock::time_point> first_piece;
  std::optional<std::size_t> prompt_tokens, completion_tokens, cached_tokens;

  void mark_byte() {
    response_started = true;
    last_byte = Clock::now();
  }

  // One event's data; false stops the transfer.
  bool on_event(std::string_view data) {
    saw_event = true;
    if (data == "[DONE]") {
      done = true;
      return true;
    }
    const json event = json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (event.is_discarded() || !event.is_object()) {
      stream_error =
          make_error(ErrorCode::corrupt, "malformed JSON in the event stream from " + *endpoint + ": " + snippet(data));
      return false;
    }
    // llama-server reports a failure after the headers went out as {"error": {...}} in the stream.
    if (auto error = event.find("error"); error != event.end()) {
      stream_error =
          make_error(ErrorCode::model, "the server at " + *endpoint + " failed mid-answer: " + server_message(*error));
      return false;
    }
    std::string piece;
    if (auto choices = event.find("choices"); choices != event.end() && choices->is_array() && !choices->empty()) {
      const json& choice = choices->front();
      if (!choice.is_object()) return corrupt_event(data);
      if (auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
        if (auto content = delta->find("content"); content != delta->end() && content->is_string()) {
          piece = content->get<std::string>();
        }
      }
      if (auto reason = choice.find("finish_reason"); reason != choice.end() && reason->is_string()) {
        finish_reason = reason->get<std::string>();
      }
    }
    if (auto usage = event.find("usage"); usage != event.end() && usage->is_object()) {
      prompt_tokens = count_field(*usage, "prompt_tokens");
      completion_tokens = count_field(*usage, "completion_tokens");
      if (auto details = usage->find("prompt_tokens_details"); details != usage->end() && details->is_object()) {
        cached_tokens = count_field(*details, "cached_tokens");
      }
    }
    return piece.empty() || deliver(piece);
  }

  bool corrupt_event(std::string_view data) {
    stream_error =
        make_error(ErrorCode::corrupt, "unexpected event in the stream from " + *endpoint + ": " + snippet(data));
    return false;
  }

  bool deliver(const std::string& piece) {
    if (!first_piece) first_piece = Clock::now();
    text += piece;
    ++pieces;
    if (!on_piece || !*on_piece) return true;
    // The callback runs inside curl's C frames, which an exception must not cross.
    try {
      cancelled = !(*on_piece)(piece);
    } catch (const std::exception& e) {
      stream_error = make_error(ErrorCode::internal, std::string("the piece callback threw: ") + e.what());
    } catch (...) {
      stream_error = make_error(ErrorCode::internal, "the piece callback threw");
    }
    return !cancelled && !stream_error;
  }
};

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<Attempt*>(user);
  const std::size_t bytes = size * count;
  attempt.mark_byte();
  std::string_view line(data, bytes);
  if (line.starts_with("HTTP/")) {
    attempt.retry_after_s.reset();  // a new response begins (after a "100 Continue", say)
  } else if (starts_with_nocase(line, "retry-after:")) {
    line.remove_prefix(12);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    long seconds = 0;  // the HTTP-date form is not worth parsing: it falls back to our backoff
    if (auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), seconds); ec == std::errc()) {
      attempt.retry_after_s = std::clamp(seconds, 0L, 86400L);
    }
  }
  return bytes;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<Attempt*>(user);
  const std::size_t bytes = size * count;
  attempt.mark_byte();
  if (attempt.status == 0) curl_easy_getinfo(attempt.easy, CURLINFO_RESPONSE_CODE, &attempt.status);
  const std::string_view chunk(data, bytes);
  if (attempt.status < 200 || attempt.status >= 300) {
    constexpr std::size_t kMaxErrorBody = 64 * 1024;
    attempt.error_body.append(chunk.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, attempt.error_body.size())));
    return bytes;
  }
  if (attempt.head.size() < 200) attempt.head.append(chunk.substr(0, 200 - attempt.head.size()));
  const bool go_on = attempt.sse.feed(chunk, [&](std::string_view event) { return attempt.on_event(event); });
  return go_on ? bytes : 0;  // 0 makes curl abort the transfer (CURLE_WRITE_ERROR)
}

bool retryable_before_answer(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: return true;
    default: return false;
  }
}

bool overloaded_status(long status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

ErrorCode code_for_status(long status) {
  if (status == 400 || status == 404 || status == 422) return ErrorCode::invalid_argument;
  if (status == 429 || status == 503) return ErrorCode::overloaded;
  return ErrorCode::model;
}

// 0.2f as 0.2 rather than 0.20000000298023224 in the request.
double decimal(float x) {
  return std::round(static_cast<double>(x) * 1e6) / 1e6;
}

std::string request_body(const std::string& model, std::span<const ChatMessage> messages,
                         const GenerationOptions& options) {
  json chat = json::array();
  for (const ChatMessage& m : messages) chat.push_back({{"role", m.role}, {"content", m.content}});
  json request = {
      {"messages", std::move(chat)},
      {"stream", true},
      {"stream_options", {{"include_usage", true}}},
      {"max_tokens", options.max_tokens},
      {"temperature", decimal(options.temperature)},
      {"top_p", decimal(options.top_p)},
  };
  if (!model.empty()) request["model"] = model;
  if (options.seed) request["seed"] = *options.seed;
  if (!options.stop.empty()) request["stop"] = options.stop;
  // Invalid UTF-8 in a message becomes U+FFFD rather than an exception.
  return request.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Result<std::unique_ptr<OpenAIChatClient>> OpenAIChatClient::create(OpenAIChatOptions options) {
  while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
  if (!options.base_url.starts_with("http://") && !options.base_url.starts_with("https://")) {
    return make_error(ErrorCode::invalid_argument,
                      "the OpenAI-compatible base URL must start with http:// or https://, got \"" + options.base_url +
                          "\" (e.g. http://127.0.0.1:8080/v1)");
  }
  if (options.context_tokens == 0) return make_error(ErrorCode::invalid_argument, "context_tokens must be positive");
  if (!curl_ready()) return make_error(ErrorCode::internal, "curl_global_init failed");
  options.max_retries = std::max(0, options.max_retries);
  return std::unique_ptr<OpenAIChatClient>(new OpenAIChatClient(std::move(options)));
}

// A connection kept alive: curl keeps it in the multi handle's cache, so the pair goes back to the
// pool together.
struct Connection {
  MultiHandle multi{curl_multi_init()};
  EasyHandle easy{curl_easy_init()};
};

struct OpenAIChatClient::Connections {
  std::mutex mutex;
  std::vector<std::unique_ptr<Connection>> idle;
  std::size_t max_idle = 0;

  std::unique_ptr<Connection> acquire() {
    {
      std::lock_guard lock(mutex);
      if (!idle.empty()) {
        auto connection = std::move(idle.back());
        idle.pop_back();
        curl_easy_reset(connection->easy.get());  // options go; the live connection stays
        return connection;
      }
    }
    return std::make_unique<Connection>();
  }
  void release(std::unique_ptr<Connection> connection) {
    std::lock_guard lock(mutex);
    if (idle.size() < max_idle) idle.push_back(std::move(connection));
  }
};

OpenAIChatClient::OpenAIChatClient(OpenAIChatOptions options)
    : options_(std::move(options)),
      endpoint_(options_.base_url + "/chat/completions"),
      connections_(std::make_unique<Connections>()) {
  connections_->max_idle = options_.max_idle_connections;
}

OpenAIChatClient::~OpenAIChatClient() = default;

std::string OpenAIChatClient::id() const {
  return "openai:" + options_.base_url + (options_.model.empty() ? "" : " " + options_.model);
}

std::size_t OpenAIChatClient::count_tokens(std::string_view text) const {
  return estimate_tokens(text);
}

Result<Generation> OpenAIChatClient::generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                                              const TokenCallback& on_piece) {
  const std::string body = request_body(options_.model, messages, options);
  HeaderList headers;
  auto add_header = [&headers](const std::string& header) {
    curl_slist* grown = curl_slist_append(headers.get(), header.c_str());
    if (grown == nullptr) return false;
    headers.release();  // now owned through `grown`
    headers.reset(grown);
    return true;
  };
  // "Expect:" stops curl from waiting for a "100 Continue" that some servers never send.
  bool headers_ok =
      add_header("Content-Type: application/json") && add_header("Accept: text/event-stream") && add_header("Expect:");
  if (!options_.api_key.empty()) headers_ok = headers_ok && add_header("Authorization: Bearer " + options_.api_key);
  if (!headers_ok) return make_error(ErrorCode::internal, "curl_slist_append failed");

  const Clock::time_point start = Clock::now();
  const int attempts_allowed = 1 + options_.max_retries;
  for (int attempt_no = 1;; ++attempt_no) {
    auto connection = connections_->acquire();
    EasyHandle& easy = connection->easy;
    MultiHandle& multi = connection->multi;
    if (!easy || !multi) return make_error(ErrorCode::internal, "curl_easy_init failed");
    Attempt attempt;
    attempt.easy = easy.get();
    attempt.endpoint = &endpoint_;
    attempt.on_piece = &on_piece;
    char curl_message[CURL_ERROR_SIZE] = {};

    CURL* e = easy.get();
    curl_easy_setopt(e, CURLOPT_URL, endpoint_.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(e, CURLOPT_USERAGENT, "kotae");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // timeouts must not raise SIGALRM in a threaded server
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::max(0L, options_.connect_timeout_ms));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, std::max(0L, options_.request_timeout_ms));
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, curl_message);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &attempt);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &attempt);

    // The multi interface, not curl_easy_perform, so the idle timeout is checked every few ms; curl's
    // own low-speed limit counts in whole seconds and would also fire while a long prompt is read.
    CURLcode code = CURLE_OK;
    bool idle = false;
    auto next_probe = Clock::now();
    if (curl_multi_add_handle(multi.get(), e) != CURLM_OK) {
      return make_error(ErrorCode::internal, "curl_multi_add_handle failed");
    }
    for (;;) {
      int running = 0;
      if (const CURLMcode mc = curl_multi_perform(multi.get(), &running); mc != CURLM_OK) {
        curl_multi_remove_handle(multi.get(), e);
        return make_error(ErrorCode::internal, std::string("curl_multi_perform: ") + curl_multi_strerror(mc));
      }
      if (running == 0) break;
      if (attempt.response_started && options_.idle_timeout_ms > 0 &&
          ms_between(attempt.last_byte, Clock::now()) >= static_cast<double>(options_.idle_timeout_ms)) {
        idle = true;
        break;
      }
      if (options.wanted && Clock::now() >= next_probe) {  // the caller's client may have gone
        next_probe = Clock::now() + std::chrono::milliseconds(250);
        if (!options.wanted()) {
          attempt.cancelled = true;
          break;
        }
      }
      curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
      if (msg->msg == CURLMSG_DONE) code = msg->data.result;
    }
    if (attempt.status == 0) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &attempt.status);
    curl_multi_remove_handle(multi.get(), e);  // a transfer broken off closes its connection
    connections_->release(std::move(connection));
    if (!idle && code == CURLE_OK && attempt.status >= 200 && attempt.status < 300) {
      attempt.sse.finish([&](std::string_view event) { return attempt.on_event(event); });
    }
    const Clock::time_point end = Clock::now();

    auto finished = [&](std::string finish_reason) -> Result<Generation> {
      Generation out;
      out.text = std::move(attempt.text);
      GenerationStats& stats = out.stats;
      // Without usage from the server: prompt tokens unknown (0), and one token per piece, which is
      // what llama-server and vLLM send.
      stats.prompt_tokens = attempt.prompt_tokens.value_or(0);
      stats.reused_prompt_tokens = attempt.cached_tokens.value_or(0);
      stats.generated_tokens = attempt.completion_tokens.value_or(attempt.pieces);
      // From the start of generate(), so time to first token includes any retries the caller waited for.
      stats.prompt_ms = ms_between(start, attempt.first_piece.value_or(end));
      stats.generation_ms = attempt.first_piece ? ms_between(*attempt.first_piece, end) : 0.0;
      stats.finish_reason = std::move(finish_reason);
      return out;
    };

    if (attempt.cancelled) return finished("cancelled");
    if (attempt.stream_error) return *attempt.stream_error;
    if (idle) {
      return make_error(ErrorCode::io, "idle timeout: the server at " + endpoint_ + " sent nothing for " +
                                           std::to_string(options_.idle_timeout_ms) + " ms (idle_timeout_ms) after " +
                                           std::to_string(attempt.pieces) + " pieces; gave up after " +
                                           attempts_text(attempt_no));
    }
    auto backoff_ms = [&] { return options_.retry_backoff_ms << std::min(attempt_no - 1, 16); };
    if (code != CURLE_OK) {
      if (!attempt.response_started && retryable_before_answer(code) && attempt_no < attempts_allowed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms()));
        continue;
      }
      std::string reason = curl_message[0] != '\0' ? curl_message : curl_easy_strerror(code);
      if (code == CURLE_OPERATION_TIMEDOUT) {
        reason = "timed out (connect_timeout_ms " + std::to_string(options_.connect_timeout_ms) +
                 ", request_timeout_ms " + std::to_string(options_.request_timeout_ms) + "): " + reason;
      }
      if (attempt.pieces > 0) reason += " (after " + std::to_string(attempt.pieces) + " pieces)";
      return make_error(ErrorCode::io,
                        "no answer from " + endpoint_ + " after " + attempts_text(attempt_no) + ": " + reason);
    }
    if (attempt.status >= 200 && attempt.status < 300) {
      if (!attempt.saw_event) {
        const std::string head = attempt.head.empty() ? std::string("(empty body)") : snippet(attempt.head);
        return make_error(ErrorCode::corrupt, "the answer from " + endpoint_ + " is not an event stream: " + head);
      }
      if (!attempt.done && attempt.finish_reason.empty()) {
        return make_error(ErrorCode::io, "the server at " + endpoint_ + " closed the event stream after " +
                                             std::to_string(attempt.pieces) + " pieces, before it finished");
      }
      return finished(attempt.finish_reason.empty() ? "stop" : attempt.finish_reason);
    }
    if (overloaded_status(attempt.status) && attempt_no < attempts_allowed) {
      long wait_ms = backoff_ms();
      if (attempt.retry_after_s) wait_ms = std::min(*attempt.retry_after_s * 1000, options_.max_retry_after_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      continue;
    }
    return make_error(code_for_status(attempt.status), "HTTP " + std::to_string(attempt.status) + " from " + endpoint_ +
                                                           " after " + attempts_text(attempt_no) + ": " +
                                                           server_message_in_body(attempt.error_body));
  }
}

}  // namespace kotae
