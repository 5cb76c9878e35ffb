#include "queue/work_queue_pool.h"

namespace kotae::queue {

WorkQueuePool::Lease::~Lease() {
  if (!pool_ || !queue_ || queue_->broken()) return;
  std::lock_guard lock(pool_->mutex_);
  pool_->idle_.push_back(std::move(queue_));
}

Result<WorkQueuePool::Lease> WorkQueuePool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto queue = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(queue));
    }
  }
  auto connection = KOTAE_TRY_VALUE(RedisConnection::connect(url_));
  return Lease(this, std::make_unique<WorkQueue>(std::move(connection), options_));
}

Result<QueueStats> WorkQueuePool::stats(std::chrono::milliseconds max_age) {
  std::lock_guard lock(stats_mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (stats_ && now - stats_at_ < max_age) return *stats_;
  stats_ = KOTAE_TRY_VALUE(with_queue([](WorkQueue& queue) { return queue.stats(); }));
  stats_at_ = now;
  return *stats_;
}

}  // namespace kotae::queue
