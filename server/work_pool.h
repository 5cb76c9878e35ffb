#pragma once
// The threads that run request handlers (search, answers, uploads) and the stages between model calls:
// a fixed pool with a bounded queue, so that overload is refused at once (503 with a retry hint)
// instead of piling up. No thread here waits on a model: handlers hand embeddings, reranks and
// generations to the models' own threads (batchers, the generator's scheduler), whose callbacks post
// the next stage back here (ServerContext::continuations).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kotae::server {

class WorkPool {
 public:
  WorkPool(std::size_t threads, std::size_t max_queued);
  ~WorkPool();  // runs what is queued, then joins
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // False when the queue is full: the caller answers "overloaded".
  bool try_post(std::function<void()> task);
  std::size_t queued() const;
  std::size_t busy() const;
  std::size_t threads() const { return threads_.size(); }

 private:
  void work();

  const std::size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  std::size_t busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kotae::server
