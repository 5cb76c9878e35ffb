#include "server/work_pool.h"

namespace kotae::server {

WorkPool::WorkPool(std::size_t threads, std::size_t max_queued) : max_queued_(max_queued) {
  for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) threads_.emplace_back([this] { work(); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

bool WorkPool::try_post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

std::size_t WorkPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::size_t WorkPool::busy() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

void WorkPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    task();
    std::lock_guard lock(mutex_);
    --busy_;
  }
}

}  // namespace kotae::server
