#pragma once
// The dynamic batcher shared by every model: requests from many threads wait in two queues
// (interactive before bulk); one worker thread per model closes a batch when it is full (by count or
// by summed tokens) or when the oldest request has waited the window, runs it, and answers each caller:
// a future to wait on, or a callback (run on the worker thread, so it must not block). A full queue
// rejects at once with `overloaded` instead of growing without bound.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch_policy.h"
#include "core/assert.h"
#include "core/result.h"

namespace kotae::batch {

template <class Request, class Response>
class DynamicBatcher {
 public:
  // Runs one batch on the worker thread; returns one result per request, in the same order.
  using RunBatch = std::function<std::vector<Result<Response>>(std::vector<Request>& requests)>;

  DynamicBatcher(std::string name, BatchPolicy policy, RunBatch run)
      : name_(std::move(name)), policy_(policy), run_(std::move(run)), worker_([this] { work(); }) {}

  // Stops accepting, runs what is already queued, then joins the worker.
  ~DynamicBatcher() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  using Done = std::function<void(Result<Response>)>;

  std::future<Result<Response>> submit(Request request, std::size_t cost, Priority priority = Priority::interactive) {
    auto promise = std::make_shared<std::promise<Result<Response>>>();
    auto future = promise->get_future();
    submit(std::move(request), cost, priority, [promise](Result<Response> r) { promise->set_value(std::move(r)); });
    return future;
  }

  // `done` runs on the worker thread once the batch ran (or here, at once, when the queue is full).
  void submit(Request request, std::size_t cost, Priority priority, Done done) {
    Pending pending{std::move(request), cost, Clock::now(), std::move(done)};
    std::size_t depth = 0;
    {
      std::lock_guard lock(mutex_);
      depth = queued_items_;
      if (!stopping_ && depth < policy_.max_queued) {
        note_arrival(pending.arrived);
        queue(priority).push_back(std::move(pending));
        ++queued_items_;
        queued_cost_ += cost;
        wake_.notify_one();
        return;
      }
    }
    if (observer_) observer_->on_rejected(depth);
    pending.done(make_error(ErrorCode::overloaded,
                            name_ + ": " + std::to_string(depth) + " requests are already waiting; retry shortly"));
  }

  std::size_t queue_depth() const {
    std::lock_guard lock(mutex_);
    return queued_items_;
  }

  // Set before the first submit; called on the worker thread.
  void set_observer(std::shared_ptr<BatchObserver> observer) { observer_ = std::move(observer); }

  const std::string& name() const { return name_; }
  const BatchPolicy& policy() const { return policy_; }

 private:
  using Clock = std::chrono::steady_clock;

  struct Pending {
    Request request;
    std::size_t cost;
    Clock::time_point arrived;
    Done done;
  };

  std::deque<Pending>& queue(Priority p) { return p == Priority::interactive ? interactive_ : bulk_; }

  // Smoothed gap between arrivals (exponential moving average, 1/8 weight for the newest gap).
  void note_arrival(Clock::time_point now) {
    if (last_arrival_ != Clock::time_point{}) {
      const auto gap = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_arrival_);
      mean_gap_ = mean_gap_ == std::chrono::nanoseconds::max() ? gap : mean_gap_ + (gap - mean_gap_) / 8;
    }
    last_arrival_ = now;
  }

  std::chrono::microseconds effective_window() const {
    if (!policy_.adaptive_window || mean_gap_ < policy_.window) return policy_.window;
    return std::chrono::microseconds{0};
  }

  bool full() const { return queued_items_ >= policy_.max_items || queued_cost_ >= policy_.max_tokens; }

  Clock::time_point oldest_arrival() const {
    if (interactive_.empty()) return bulk_.front().arrived;
    if (bulk_.empty()) return interactive_.front().arrived;
    return std::min(interactive_.front().arrived, bulk_.front().arrived);
  }

  // Takes up to max_items / max_tokens, interactive first; always at least one request.
  std::vector<Pending> take_batch(std::size_t& interactive_taken) {
    std::vector<Pending> batch;
    std::size_t cost = 0;
    for (auto* q : {&interactive_, &bulk_}) {
      if (q == &bulk_) interactive_taken = batch.size();
      while (!q->empty() && batch.size() < policy_.max_items &&
             (batch.empty() || cost + q->front().cost <= policy_.max_tokens)) {
        cost += q->front().cost;
        batch.push_back(std::move(q->front()));
        q->pop_front();
      }
    }
    queued_items_ -= batch.size();
    queued_cost_ -= cost;
    return batch;
  }

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || queued_items_ > 0; });
      if (queued_items_ == 0) return;  // stopping and drained
      const auto deadline = oldest_arrival() + effective_window();
      wake_.wait_until(lock, deadline, [&] { return stopping_ || full(); });
      BatchRecord record;
      std::vector<Pending> batch = take_batch(record.interactive_items);
      record.queue_depth = queued_items_;
      lock.unlock();
      run(batch, record);
      lock.lock();
    }
  }

  void run(std::vector<Pending>& batch, BatchRecord& record) {
    const auto start = Clock::now();
    record.items = batch.size();
    std::vector<Request> requests;
    requests.reserve(batch.size());
    std::chrono::nanoseconds total_wait{0};
    for (auto& p : batch) {
      record.tokens += p.cost;
      const auto wait = start - p.arrived;
      total_wait += wait;
      record.oldest_wait = std::max<std::chrono::nanoseconds>(record.oldest_wait, wait);
      requests.push_back(std::move(p.request));
    }
    record.mean_wait = total_wait / static_cast<long>(batch.size());
    std::vector<Result<Response>> results;
    try {
      results = run_(requests);
    } catch (const std::exception& e) {
      results.assign(batch.size(), make_error(ErrorCode::internal, name_ + ": batch failed: " + e.what()));
    }
    KOTAE_ASSERT(results.size() == batch.size());
    record.run_time = Clock::now() - start;
    if (observer_) observer_->on_batch(record);  // before callers resume, so metrics never lag answers
    for (std::size_t i = 0; i < batch.size(); ++i) {
      try {
        batch[i].done(std::move(results[i]));
      } catch (const std::exception&) {
        // a caller's callback failing is that caller's loss; the worker serves everyone else
      }
    }
  }

  const std::string name_;
  const BatchPolicy policy_;
  const RunBatch run_;
  std::shared_ptr<BatchObserver> observer_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> interactive_, bulk_;
  std::size_t queued_items_ = 0;
  std::size_t queued_cost_ = 0;
  Clock::time_point last_arrival_{};
  std::chrono::nanoseconds mean_gap_ = std::chrono::nanoseconds::max();
  bool stopping_ = false;
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace kotae::batch
