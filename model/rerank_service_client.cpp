#include "model/rerank_service_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/log.h"

namespace kotae {
// Its own namespace: the library is built as one unit, beside openai_chat_client.cpp's helpers.
namespace rerank_service {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxAnswerDepth = 8;  // Cohere's meta.billed_units.search_units is 3 deep

struct EasyFree {
  void operator()(CURL* p) const { curl_easy_cleanup(p); }
};
struct ListFree {
  void operator()(curl_slist* p) const { curl_slist_free_all(p); }
};

bool curl_initialised() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return code == CURLE_OK;
}

std::string cut(std::string_view text, std::size_t max = 200) {
  std::string out(text.substr(0, max));
  if (text.size() > max) out += "...";
  return out;
}

Error refused(const std::string& why) {
  return make_error(ErrorCode::corrupt, "the rerank service's answer was refused: " + why);
}

}  // namespace
}  // namespace rerank_service

Result<RerankApi> parse_rerank_api(std::string_view name) {
  if (name == "tei") return RerankApi::tei;
  if (name == "cohere" || name == "cohere-v1" || name == "jina-v1" || name == "jina") return RerankApi::cohere_v1;
  if (name == "cohere-v2") return RerankApi::cohere_v2;
  return make_error(ErrorCode::invalid_argument,
                    "--rerank-api " + std::string(name) + ": give tei, cohere (jina-v1) or cohere-v2");
}

const char* to_string(RerankApi api) {
  switch (api) {
    case RerankApi::tei: return "tei";
    case RerankApi::cohere_v1: return "cohere";
    case RerankApi::cohere_v2: return "cohere-v2";
  }
  return "tei";
}

Result<RerankApi> rerank_api_from_url(std::string_view url) {
  std::string_view path = url.substr(0, url.find_first_of("?#"));
  while (path.ends_with('/')) path.remove_suffix(1);
  if (path.ends_with("/v2/rerank")) return RerankApi::cohere_v2;
  if (path.ends_with("/v1/rerank")) return RerankApi::cohere_v1;
  if (path.ends_with("/rerank")) return RerankApi::tei;
  return make_error(ErrorCode::invalid_argument, "--rerank-url " + std::string(url) +
                                                     ": the path does not say which API it speaks (/rerank: "
                                                     "TEI, /v1/rerank: Cohere v1 or Jina, /v2/rerank: Cohere "
                                                     "v2); give --rerank-api");
}

std::string rerank_request_body(RerankApi api, const std::string& model, std::string_view query,
                                std::span<const std::string> passages) {
  nlohmann::json body = nlohmann::json::object();
  if (!model.empty()) body["model"] = model;
  body["query"] = query;
  nlohmann::json texts = nlohmann::json::array();
  for (const auto& p : passages) texts.push_back(p);
  if (api == RerankApi::tei) {
    body["texts"] = std::move(texts);
    body["truncate"] = true;  // as the local cross-encoder: a long passage is read in part, not refused
  } else {
    body["documents"] = std::move(texts);
    body["top_n"] = passages.size();  // every passage's score, not the best few
    if (api == RerankApi::cohere_v1) body["return_documents"] = false;
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::vector<float>> parse_rerank_response(RerankApi api, std::string_view body, std::size_t expected) {
  using rerank_service::refused;
  constexpr int max_depth = rerank_service::kMaxAnswerDepth;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(body, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > max_depth) throw std::length_error("nested deeper than " + std::to_string(max_depth));
      return true;
    });
  } catch (const std::exception& e) {
    return refused("not JSON (" + rerank_service::cut(e.what(), 120) + ")");
  }
  const nlohmann::json* results = &doc;
  if (api != RerankApi::tei) {
    if (!doc.is_object() || !doc.contains("results")) return refused("no \"results\"");
    results = &doc["results"];
  }
  if (!results->is_array()) return refused(api == RerankApi::tei ? "not a list" : "\"results\" is not a list");
  if (results->size() != expected) {
    return refused(std::to_string(results->size()) + " results for " + std::to_string(expected) + " passages");
  }
  const char* score_key = api == RerankApi::tei ? "score" : "relevance_score";
  std::vector<float> scores(expected, 0.0f);
  std::vector<bool> seen(expected, false);
  for (const auto& r : *results) {
    if (!r.is_object()) return refused("a result is not an object");
    const auto index = r.find("index");
    if (index == r.end() || !index->is_number_integer()) return refused("a result without an integer \"index\"");
    if (!index->is_number_unsigned()) return refused("a negative index");  // JSON's other integers are unsigned
    const auto i = index->get<std::uint64_t>();
    if (i >= expected) return refused("index " + std::to_string(i) + " out of range");
    if (seen[i]) return refused("index " + std::to_string(i) + " twice");
    const auto score = r.find(score_key);
    if (score == r.end() || !score->is_number())
      return refused(std::string("a result without a numeric \"") + score_key + "\"");
    const double value = score->get<double>();
    if (!std::isfinite(value) || std::fabs(value) > std::numeric_limits<float>::max())
      return refused("a score that is not a finite number");
    seen[i] = true;
    scores[i] = static_cast<float>(value);
  }
  return scores;  // expected results, each index once and in range: every passage is scored
}

// One score call: its passages go out in batches, one request each; the call ends with its last
// answer, or with its first failure (the others are then abandoned).
namespace rerank_service {
namespace {

struct Call {
  std::string query;
  std::vector<std::string> passages;
  Reranker::ScoresDone done;
  std::vector<float> scores;
  std::size_t unanswered = 0;  // batches
  bool probe = false;          // the one call let through a circuit past its cool-down
  bool ended = false;
};

struct Request {
  std::shared_ptr<Call> call;
  std::size_t offset = 0, count = 0;
  std::string body;
  std::string answer;
  bool too_large = false;
  std::size_t max_bytes = 0;
  std::unique_ptr<curl_slist, ListFree> headers;  // before `easy`, which reads it until cleaned up
  std::unique_ptr<CURL, EasyFree> easy;
  char error[CURL_ERROR_SIZE] = {};
};

std::size_t keep_answer(char* data, std::size_t size, std::size_t n, void* user) {
  auto* request = static_cast<Request*>(user);
  const std::size_t bytes = size * n;
  if (request->answer.size() + bytes > request->max_bytes) {
    request->too_large = true;
    return 0;  // aborts the transfer
  }
  request->answer.append(data, bytes);
  return bytes;
}

}  // namespace
}  // namespace rerank_service

namespace rerank_service {

class ServiceWorker {
 public:
  const RerankServiceOptions& options;
  CURLM* multi = nullptr;
  std::mutex mutex;  // guards everything below up to `thread`
  std::deque<std::shared_ptr<Call>> incoming;
  std::size_t pending = 0;  // calls admitted and not yet ended
  bool stopping = false;
  int failures_in_a_row = 0;
  bool open = false;
  bool probing = false;
  Clock::time_point open_until;
  RerankServiceStats stats;
  std::map<CURL*, std::unique_ptr<Request>> active;  // the worker thread's alone
  std::thread thread;

  explicit ServiceWorker(const RerankServiceOptions& o) : options(o), multi(curl_multi_init()) {
    thread = std::thread([this] { run(); });
  }
  ~ServiceWorker() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    curl_multi_wakeup(multi);
    thread.join();
    curl_multi_cleanup(multi);
  }

  // On the caller's thread: the call is queued, or failed at once by the open circuit or a full queue.
  void admit(const std::shared_ptr<Call>& call) {
    std::optional<Error> now_refused;
    {
      std::lock_guard lock(mutex);
      if (stopping) {
        now_refused = make_error(ErrorCode::stopped, "the rerank service client is shutting down");
      } else if (open && (Clock::now() < open_until || probing)) {
        ++stats.skipped;
        now_refused =
            make_error(ErrorCode::unavailable, "the rerank service failed " + std::to_string(failures_in_a_row) +
                                                   " times in a row: skipped until it has cooled down");
      } else if (pending >= options.max_pending) {
        now_refused = make_error(ErrorCode::overloaded, "too many rerank service calls waiting");
      } else {
        if (open) probing = call->probe = true;
        ++pending;
        ++stats.calls;
        incoming.push_back(call);
      }
    }
    if (now_refused) return call->done(std::move(*now_refused));
    curl_multi_wakeup(multi);
  }

  void run() {
    for (;;) {
      std::deque<std::shared_ptr<Call>> starting;
      bool stop = false;
      {
        std::lock_guard lock(mutex);
        starting.swap(incoming);
        stop = stopping;
      }
      if (stop) {
        for (auto& call : starting) end(call, make_error(ErrorCode::stopped, "the rerank service client stopped"));
        while (!active.empty()) {
          auto call = active.begin()->second->call;
          end(call, make_error(ErrorCode::stopped, "the rerank service client stopped"));
        }
        return;
      }
      for (auto& call : starting) start(call);
      int running = 0;
      curl_multi_perform(multi, &running);
      int left = 0;
      while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
        if (message->msg == CURLMSG_DONE) answered(message->easy_handle, message->data.result);
      }
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);  // woken early by admit() and curl's own timers
    }
  }

  void start(const std::shared_ptr<Call>& call) {
    const std::size_t n = call->passages.size(), batch = options.max_batch;
    call->scores.assign(n, 0.0f);
    call->unanswered = (n + batch - 1) / batch;
    for (std::size_t offset = 0; offset < n && !call->ended; offset += batch) {
      auto request = std::make_unique<Request>();
      request->call = call;
      request->offset = offset;
      request->count = std::min(batch, n - offset);
      request->max_bytes = options.max_response_bytes;
      request->body = rerank_request_body(options.api, options.model, call->query,
                                          std::span<const std::string>(call->passages).subspan(offset, request->count));
      request->easy.reset(curl_easy_init());
      CURL* easy = request->easy.get();
      if (!easy) return end(call, make_error(ErrorCode::internal, "libcurl could not start a request"));
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
      headers = curl_slist_append(headers, "Accept: application/json");
      headers = curl_slist_append(headers, "Expect:");  // no wait for "100 Continue" before a large body
      if (!options.api_key.empty())
        headers = curl_slist_append(headers, ("Authorization: Bearer " + options.api_key).c_str());
      request->headers.reset(headers);
      curl_easy_setopt(easy, CURLOPT_URL, options.url.c_str());
      curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(easy, CURLOPT_POST, 1L);
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request->body.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request->body.size()));
      curl_easy_setopt(easy, CURLOPT_HTTPHEADER, request->headers.get());
      curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, options.timeout_ms);
      curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, std::min(options.connect_timeout_ms, options.timeout_ms));
      curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, keep_answer);
      curl_easy_setopt(easy, CURLOPT_WRITEDATA, request.get());
      curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, request->error);
      if (curl_multi_add_handle(multi, easy) != CURLM_OK)
        return end(call, make_error(ErrorCode::internal, "libcurl could not start a request"));
      active.emplace(easy, std::move(request));
      std::lock_guard lock(mutex);
      ++stats.requests;
    }
  }

  void answered(CURL* easy, CURLcode code) {
    const auto it = active.find(easy);
    if (it == active.end()) return;
    Request& request = *it->second;
    auto call = request.call;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    std::optional<Error> failed;
    if (request.too_large) {
      failed = refused("larger than " + std::to_string(options.max_response_bytes) + " bytes");
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
      failed = make_error(ErrorCode::unavailable,
                          "the rerank service did not answer within " + std::to_string(options.timeout_ms) + " ms");
    } else if (code != CURLE_OK) {
      failed = make_error(ErrorCode::unavailable, std::string("the rerank service cannot be reached: ") +
                                                      (request.error[0] ? request.error : curl_easy_strerror(code)));
    } else if (status < 200 || status > 299) {
      failed = make_error(status >= 400 && status < 500 && status != 408 && status != 429 ? ErrorCode::invalid_argument
                                                                                          : ErrorCode::unavailable,
                          "the rerank service answered HTTP " + std::to_string(status) + ": " + cut(request.answer));
    } else {
      auto scores = parse_rerank_response(options.api, request.answer, request.count);
      if (!scores) {
        failed = scores.error();
      } else {
        std::copy(scores->begin(), scores->end(), call->scores.begin() + static_cast<std::ptrdiff_t>(request.offset));
      }
    }
    curl_multi_remove_handle(multi, easy);
    active.erase(it);
    if (call->ended) return;
    if (failed) return end(call, std::move(*failed));
    if (--call->unanswered == 0) end(call, std::move(call->scores));
  }

  // The call's end: its other requests abandoned, the circuit told, the caller answered.
  void end(const std::shared_ptr<Call>& call, Result<std::vector<float>> result) {
    if (call->ended) return;
    call->ended = true;
    for (auto it = active.begin(); it != active.end();) {
      if (it->second->call == call) {
        curl_multi_remove_handle(multi, it->first);
        it = active.erase(it);
      } else {
        ++it;
      }
    }
    bool opened = false;
    int in_a_row = 0;
    {
      std::lock_guard lock(mutex);
      --pending;
      if (call->probe) probing = false;
      if (result) {
        failures_in_a_row = 0;
        open = false;
      } else if (result.error().code != ErrorCode::stopped) {
        ++stats.failures;
        in_a_row = ++failures_in_a_row;
        if (call->probe || (!open && failures_in_a_row >= options.failures_to_open)) {
          opened = !open;
          open = true;
          open_until = Clock::now() + std::chrono::milliseconds(options.cool_down_ms);
        }
      }
    }
    if (opened) {
      log_event(
          "rerank_service_circuit_open",
          {{"failures_in_a_row", in_a_row}, {"cool_down_ms", options.cool_down_ms}, {"reason", result.error().message}},
          LogLevel::warn);
    }
    call->done(std::move(result));
  }
};

}  // namespace rerank_service

struct RerankServiceClient::Worker : rerank_service::ServiceWorker {
  using ServiceWorker::ServiceWorker;
};

RerankServiceClient::RerankServiceClient(RerankServiceOptions options) : options_(std::move(options)) {}

RerankServiceClient::~RerankServiceClient() = default;

Result<std::unique_ptr<RerankServiceClient>> RerankServiceClient::create(RerankServiceOptions options) {
  const auto& url = options.url;
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if ((scheme != "http" && scheme != "https") || url.size() <= scheme_end + 3 || url[scheme_end + 3] == '/') {
    return make_error(ErrorCode::invalid_argument, "--rerank-url " + url +
                                                       ": not an http:// or https:// URL with a host (e.g. "
                                                       "http://127.0.0.1:8080/rerank)");
  }
  if (options.timeout_ms < 1 || options.timeout_ms > 600000)
    return make_error(ErrorCode::invalid_argument, "--rerank-timeout-ms: from 1 to 600000");
  if (options.max_batch < 1 || options.max_batch > 10000)
    return make_error(ErrorCode::invalid_argument, "--rerank-batch: from 1 to 10000");
  if (options.failures_to_open < 1) return make_error(ErrorCode::invalid_argument, "failures_to_open: at least 1");
  if (options.cool_down_ms < 0 || options.cool_down_ms > 3600000)
    return make_error(ErrorCode::invalid_argument, "--rerank-cool-down-ms: from 0 to 3600000");
  if (!rerank_service::curl_initialised()) return make_error(ErrorCode::internal, "libcurl could not be initialised");
  std::unique_ptr<RerankServiceClient> client(new RerankServiceClient(std::move(options)));
  client->worker_ = std::make_unique<Worker>(client->options_);
  return client;
}

std::string RerankServiceClient::id() const {
  return std::string("rerank-service:") + to_string(options_.api) +
         (options_.model.empty() ? "" : ":" + options_.model);
}

RerankServiceStats RerankServiceClient::stats() const {
  std::lock_guard lock(worker_->mutex);
  auto out = worker_->stats;
  out.circuit_open = worker_->open;
  return out;
}

void RerankServiceClient::score_async(std::string query, std::vector<std::string> passages, ScoresDone done) const {
  if (passages.empty()) return done(std::vector<float>{});
  auto call = std::make_shared<rerank_service::Call>();
  call->query = std::move(query);
  call->passages = std::move(passages);
  call->done = std::move(done);
  worker_->admit(call);
}

Result<std::vector<float>> RerankServiceClient::score(std::string_view query,
                                                      std::span<const std::string> passages) const {
  std::promise<Result<std::vector<float>>> promise;
  auto future = promise.get_future();
  score_async(std::string(query), std::vector<std::string>(passages.begin(), passages.end()),
              [&promise](Result<std::vector<float>> scores) { promise.set_value(std::move(scores)); });
  return future.get();
}

}  // namespace kotae
