#include "queue/work_queue_pool.h"

namespace kotae::queue {

WorkQueuePool::WorkQueuePool(std::string url, WorkQueueOptions options)
    : Pool(
          [url, options]() -> Result<std::unique_ptr<WorkQueue>> {
            auto connection = KOTAE_TRY_VALUE(RedisConnection::connect(url));
            return std::make_unique<WorkQueue>(std::move(connection), options);
          },
          0, [](WorkQueue& queue) { return !queue.broken(); }),
      url_(std::move(url)),
      options_(std::move(options)) {}

Result<QueueStats> WorkQueuePool::stats(std::chrono::milliseconds max_age) {
  std::lock_guard lock(stats_mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (stats_ && now - stats_at_ < max_age) return *stats_;
  stats_ = KOTAE_TRY_VALUE(with_queue([](WorkQueue& queue) { return queue.stats(); }));
  stats_at_ = now;
  return *stats_;
}

}  // namespace kotae::queue
