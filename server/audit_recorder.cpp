#include "server/audit_recorder.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "server/json_body.h"  // kMaxJsonDepth, nested_deeper_than

namespace kotae::server {
namespace {

constexpr std::size_t kMaxRemembered = 10'000;   // keys and addresses whose last event is remembered
constexpr std::size_t kMaxQuestionBytes = 2000;  // of a question's text kept in the trail

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string outcome_of(int status) {
  if (status < 400) return "ok";
  if (status == 401 || status == 403 || status == 404 || status == 429) return "denied";
  return "failed";
}

// The request's JSON body, when it is one (the handler has refused any that is not, but the call is
// recorded either way).
nlohmann::json body_of(const HttpRequest& request) {
  if (request.body.empty() || request.body.front() != '{' || nested_deeper_than(request.body, kMaxJsonDepth)) return {};
  auto body = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  return body.is_object() ? body : nlohmann::json();
}

std::string string_in(const nlohmann::json& body, const char* name) {
  const auto it = body.is_object() ? body.find(name) : body.end();
  return it != body.end() && it->is_string() ? it->get<std::string>() : "";
}

// A chat's question: the last user message's text.
std::string last_user_message(const nlohmann::json& body) {
  const auto messages = body.is_object() ? body.find("messages") : body.end();
  if (messages == body.end() || !messages->is_array()) return "";
  for (auto it = messages->rbegin(); it != messages->rend(); ++it) {
    if (it->is_object() && it->value("role", "") == "user") return string_in(*it, "content");
  }
  return "";
}

std::string clipped(std::string text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // a whole UTF-8 character
  text.resize(end);
  return text;
}

}  // namespace

AuditRecorder::AuditRecorder(std::shared_ptr<store::AuditTrail> trail, AuditOptions options)
    : trail_(std::move(trail)), options_(options), writer_([this] { run(); }) {}

AuditRecorder::~AuditRecorder() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

void AuditRecorder::record(store::AuditEvent event) {
  if (event.at == 0) event.at = now_seconds();
  if (event.detail.empty()) event.detail = "{}";
  nlohmann::json line{{"tenant", event.tenant}, {"actor", event.actor},          {"address", event.address},
                      {"action", event.action}, {"target", event.target},        {"outcome", event.outcome},
                      {"status", event.status}, {"request_id", event.request_id}};
  if (event.detail != "{}") line["detail"] = nlohmann::json::parse(event.detail, nullptr, false);
  log_event("audit", line, event.outcome == "ok" ? LogLevel::info : LogLevel::warn);
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= kMaxQueued) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(event));
    ++queued_total_;
  }
  wake_.notify_one();
}

store::AuditEvent AuditRecorder::call_event(const HttpRequest& request, const char* action, const std::string& tenant,
                                            const std::string& actor, const std::string& request_id) const {
  store::AuditEvent event;
  event.tenant = tenant;
  event.actor = actor;
  event.address = request.remote_address;
  event.action = action;
  event.request_id = request_id;
  const auto& params = request.path_params;
  const auto name = params.find("name"), id = params.find("id");
  const nlohmann::json body = name == params.end() && request.method == "POST" ? body_of(request) : nlohmann::json();
  if (name != params.end()) {
    event.target = name->second + (id != params.end() ? "/" + id->second : "");
  } else if (id != params.end()) {
    event.target = id->second;
  } else {
    event.target = string_in(body, "collection");
  }
  nlohmann::json detail = nlohmann::json::object();
  if (options_.questions && !body.is_null()) {
    std::string question = string_in(body, "question");
    if (question.empty()) question = string_in(body, "query");
    if (question.empty()) question = last_user_message(body);
    if (!question.empty()) detail["question"] = clipped(std::move(question), kMaxQuestionBytes);
  }
  // A collection renamed: the target is its old name, the detail its new one (as asked: a name the
  // handler refuses is recorded, cut, with the refusal's status).
  if (name != params.end() && request.method == "PATCH" && std::string_view(action) == "collection.rename") {
    if (auto to = string_in(body_of(request), "name"); !to.empty()) detail["to"] = clipped(std::move(to), 200);
  }
  event.detail = detail.dump();
  return event;
}

void AuditRecorder::finish(store::AuditEvent event, int status) {
  event.status = status;
  event.outcome = outcome_of(status);
  record(std::move(event));
}

void AuditRecorder::record_refusal(const HttpRequest& request, int status, const std::string& reason,
                                   const std::string& request_id) {
  {
    std::lock_guard lock(mutex_);
    if (!due(refused_from_, request.remote_address, 60)) return;
  }
  store::AuditEvent event;
  event.actor = "anonymous";
  event.address = request.remote_address;
  event.action = "auth.refused";
  event.target = request.method + " " + clipped(request.path, 200);
  event.outcome = "denied";
  event.status = status;
  event.request_id = request_id;
  event.detail = nlohmann::json{{"reason", reason}}.dump();
  record(std::move(event));
}

bool AuditRecorder::key_use_due(const std::string& key_name) {
  std::lock_guard lock(mutex_);
  return due(key_used_, key_name, 600);
}

bool AuditRecorder::due(std::unordered_map<std::string, double>& last, const std::string& key, double every) {
  const double now = now_seconds();
  if (last.size() >= kMaxRemembered) last.clear();  // forgetting only makes the next event due early
  auto [it, fresh] = last.emplace(key, now);
  if (fresh) return true;
  if (now - it->second < every) return false;
  it->second = now;
  return true;
}

void AuditRecorder::flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t wanted = queued_total_;
  wake_.notify_one();
  stored_.wait(lock, [&] { return stored_total_ >= wanted; });
}

std::uint64_t AuditRecorder::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void AuditRecorder::run() {
  using std::chrono::steady_clock;
  auto next_trim = steady_clock::now();
  std::unique_lock lock(mutex_);
  while (true) {
    // A batch every 200 ms at most: one transaction for what a busy second brings.
    wake_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_ || !queue_.empty(); });
    std::vector<store::AuditEvent> batch;
    batch.swap(queue_);
    const bool stopping = stopping_;
    lock.unlock();
    if (!batch.empty()) {
      if (auto stored = trail_->record(batch); !stored) {
        log_event("audit_not_stored", {{"events", batch.size()}, {"reason", stored.error().message}}, LogLevel::error);
      }
    }
    if (steady_clock::now() >= next_trim) {
      next_trim = steady_clock::now() + std::chrono::hours(1);
      if (auto trimmed = trail_->trim(now_seconds() - options_.retention_days * 86400, options_.max_events); !trimmed) {
        log_event("audit_not_trimmed", {{"reason", trimmed.error().message}}, LogLevel::warn);
      }
    }
    lock.lock();
    stored_total_ += batch.size();
    stored_.notify_all();
    if (stopping && queue_.empty()) return;
  }
}

}  // namespace kotae::server
