#pragma once
// Records the audit trail (store/audit_trail.h): each event is a JSON log line at once and a row in
// the store soon after, written by one thread in batches (a search does not wait for a disk flush).
// Bounded everywhere: a queue of kMaxQueued events (beyond it an event is logged but not stored, and
// counted), retention by age and count, and refused authentications recorded at most once per client
// address per minute, so a flood of bad keys cannot flood the trail.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/http_message.h"
#include "store/audit_trail.h"

namespace kotae::server {

struct AuditOptions {
  bool questions = false;              // store the text of questions (ask, chat, search); off: only that one was asked
  double retention_days = 90;          // events older than this are removed (hourly)
  std::size_t max_events = 1'000'000;  // and all but the newest this many
};

class AuditRecorder {
 public:
  static constexpr std::size_t kMaxQueued = 10'000;

  AuditRecorder(std::shared_ptr<store::AuditTrail> trail, AuditOptions options);
  ~AuditRecorder();  // stores what is queued
  AuditRecorder(const AuditRecorder&) = delete;
  AuditRecorder& operator=(const AuditRecorder&) = delete;

  const AuditOptions& options() const { return options_; }
  store::AuditTrail& trail() { return *trail_; }

  void record(store::AuditEvent event);
  // An API call's event before it runs: its target (the collection and document in its path or body,
  // a job or conversation id) and, when configured, the question's text, read from `request`.
  store::AuditEvent call_event(const HttpRequest& request, const char* action, const std::string& tenant,
                               const std::string& actor, const std::string& request_id) const;
  // Records it with the status the call was answered with.
  void finish(store::AuditEvent event, int status);
  // A key or token refused (401/403 before any handler): once a minute per address.
  void record_refusal(const HttpRequest& request, int status, const std::string& reason, const std::string& request_id);
  // Whether a key's use is due to be recorded: its first use on this replica, then every ten minutes.
  bool key_use_due(const std::string& key_name);
  // Waits until every event recorded so far is stored (tests; shutdown).
  void flush();
  std::uint64_t dropped() const;

 private:
  void run();
  bool due(std::unordered_map<std::string, double>& last, const std::string& key, double every);

  std::shared_ptr<store::AuditTrail> trail_;
  AuditOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, stored_;
  std::vector<store::AuditEvent> queue_;
  std::uint64_t queued_total_ = 0, stored_total_ = 0, dropped_ = 0;
  std::unordered_map<std::string, double> key_used_, refused_from_;
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace kotae::server
