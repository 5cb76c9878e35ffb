#pragma once
// When the dynamic batcher closes a batch, and how much it lets wait.

#include <chrono>
#include <cstddef>

namespace kotae::batch {

// Interactive work (a user's query) goes before bulk work (ingestion) in every batch.
enum class Priority { interactive = 0, bulk = 1 };

struct BatchPolicy {
  std::size_t max_items = 64;              // close the batch at this many requests...
  std::size_t max_tokens = 16384;          // ...or this much summed cost (tokens)...
  std::chrono::microseconds window{2000};  // ...or when the oldest has waited this long (0: never wait)
  std::size_t max_queued = 8192;           // beyond this many waiting requests, submit says "overloaded"
  // Wait the window only while requests arrive faster than one per window (smoothed): a lone caller
  // then pays no waiting, while concurrent callers still share batches.
  bool adaptive_window = true;
};

// What one batch looked like: the metrics hooks receive one per batch.
struct BatchRecord {
  std::size_t items = 0;
  std::size_t tokens = 0;
  std::size_t interactive_items = 0;
  std::chrono::nanoseconds oldest_wait{0};  // from the first request's arrival to the batch's start
  std::chrono::nanoseconds mean_wait{0};
  std::chrono::nanoseconds run_time{0};
  std::size_t queue_depth = 0;  // still waiting when the batch started
};

class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  virtual void on_batch(const BatchRecord& record) = 0;
  virtual void on_rejected(std::size_t /*queue_depth*/) {}
};

}  // namespace kotae::batch
