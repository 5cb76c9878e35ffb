#pragma once
// Work queues for many threads (the API's handlers): each caller borrows a queue over a connection of
// its own, opened on demand; one whose connection was lost is dropped when given back, so once Redis
// is back the next borrower connects again by itself.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "queue/work_queue.h"

namespace kotae::queue {

class WorkQueuePool {
 public:
  class Lease {
   public:
    Lease(WorkQueuePool* pool, std::unique_ptr<WorkQueue> queue) : pool_(pool), queue_(std::move(queue)) {}
    ~Lease();
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    WorkQueue& operator*() const { return *queue_; }
    WorkQueue* operator->() const { return queue_.get(); }

   private:
    WorkQueuePool* pool_;
    std::unique_ptr<WorkQueue> queue_;
  };

  WorkQueuePool(std::string url, WorkQueueOptions options) : url_(std::move(url)), options_(std::move(options)) {}
  // `unavailable` when Redis cannot be reached.
  Result<Lease> acquire();
  const std::string& url() const { return url_; }
  const WorkQueueOptions& options() const { return options_; }

 private:
  std::string url_;
  WorkQueueOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkQueue>> idle_;
};

}  // namespace kotae::queue
