#pragma once
// Work queues for many threads (the API's handlers): each caller borrows a queue over a connection of
// its own, opened on demand; one whose connection was lost is dropped when given back, so once Redis
// is back the next borrower connects again by itself.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/pool.h"
#include "core/result.h"
#include "queue/work_queue.h"

namespace kotae::queue {

class WorkQueuePool : public Pool<WorkQueue> {
 public:
  WorkQueuePool(std::string url, WorkQueueOptions options);
  // acquire(): `unavailable` when Redis cannot be reached.
  // Runs `use` on a borrowed queue, and once more on a fresh connection when the first try found Redis
  // unavailable (an idle connection Redis dropped, as when it restarted).
  template <typename Use>
  auto with_queue(Use use) -> decltype(use(std::declval<WorkQueue&>())) {
    for (int attempt = 0;; ++attempt) {
      auto lease = acquire();
      if (!lease) return lease.error();
      auto result = use(**lease);
      if (result || result.error().code != ErrorCode::unavailable || attempt > 0) return result;
    }
  }
  // The queue's figures, read again when those kept are older than `max_age` (metrics, bounds).
  Result<QueueStats> stats(std::chrono::milliseconds max_age = std::chrono::seconds(1));
  const std::string& url() const { return url_; }
  const WorkQueueOptions& options() const { return options_; }

 private:
  std::string url_;
  WorkQueueOptions options_;
  std::mutex stats_mutex_;
  std::optional<QueueStats> stats_;
  std::chrono::steady_clock::time_point stats_at_;
};

}  // namespace kotae::queue
