#pragma once
// The loop every worker runs: threads that each take entries from a Redis work queue over a connection of
// their own (entries abandoned by a dead worker first, once they are due), hand each to the worker's
// handler, and reconnect when Redis goes away; a heartbeat thread keeps the entries being handled from
// being claimed by another worker. The handler acknowledges, retries or dead-letters its entry.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "queue/work_queue.h"

namespace kotae::worker {

struct QueueConsumerOptions {
  std::string queue_url;
  queue::WorkQueueOptions queue;
  std::size_t threads = 1;
  std::string consumer;                  // this process in the consumer group (host and process id)
  std::chrono::milliseconds block{500};  // how long a take waits for new entries
  std::size_t take_max = 0;              // entries a thread takes at once (0: one per tenant stream)
};

using EntryHandler = std::function<void(queue::WorkQueue& queue, const queue::QueueEntry& entry)>;

class QueueConsumer {
 public:
  QueueConsumer(QueueConsumerOptions options, EntryHandler handle);
  ~QueueConsumer();  // stop()

  // Stops taking entries and waits for those being handled; entries taken but not begun are left for
  // other workers (claimed after the claim time).
  void stop();
  bool stopping() const { return stopping_.load(); }
  // False once stop() was called; else sleeps `time`.
  bool sleep_unless_stopped(std::chrono::milliseconds time);
  // The last round trip to Redis succeeded.
  bool ready() const { return connected_.load(); }
  // Entries being handled now.
  std::size_t busy() const { return busy_.load(); }

 private:
  void work(std::size_t thread);
  void heartbeat();
  void hold(std::size_t thread, const queue::QueueEntry* entry);  // null: holds nothing
  std::string consumer(std::size_t thread) const;

  QueueConsumerOptions options_;
  EntryHandler handle_;
  std::atomic<bool> stopping_{false}, connected_{false};
  std::atomic<std::size_t> busy_{0};
  std::mutex mutex_;
  std::condition_variable stopped_;
  std::map<std::size_t, queue::QueueEntry> held_;  // per thread, the entry it handles
  std::vector<std::thread> threads_;
};

}  // namespace kotae::worker
