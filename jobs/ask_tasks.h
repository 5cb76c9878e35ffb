#pragma once
// Questions asked with "async": true. The replica that accepted one answers it after its 202 and keeps
// its record where every replica can read it (GET /v1/tasks/{id}): in Redis when the server has a work
// queue, else in this process. A record is JSON: id, tenant, status (queued, running, succeeded, failed),
// created_at, finished_at, and the answer (as POST /v1/ask returns it) or the error. Records expire
// `keep` after they were last written; in this process the oldest also go beyond `max_kept`.

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "queue/work_queue_pool.h"

namespace kotae::jobs {

class AskTasks {
 public:
  // `redis` null: records stay in this process.
  AskTasks(std::shared_ptr<queue::WorkQueuePool> redis, std::chrono::seconds keep = std::chrono::hours(1),
           std::size_t max_kept = 10000);

  // Writes the record (its "id" names it), replacing the one before.
  Result<void> put(const nlohmann::json& record);
  // The record, or nothing when there is none (never was, or expired).
  Result<std::optional<nlohmann::json>> get(const std::string& id);

 private:
  std::string key(const std::string& id) const { return "kotae:asks:" + id; }

  std::shared_ptr<queue::WorkQueuePool> redis_;
  std::chrono::seconds keep_;
  std::size_t max_kept_;
  std::mutex mutex_;  // guards the records kept in this process
  struct Kept {
    nlohmann::json record;
    std::chrono::steady_clock::time_point written;
  };
  std::map<std::string, Kept> kept_;
  std::deque<std::string> order_;  // first written first
};

}  // namespace kotae::jobs
