#pragma once
// A durable work queue on Redis Streams, for ingestion and answer tasks that workers on other machines
// take. Entries live in one stream per (priority band, tenant) and are read through one consumer group:
//   - priority: a take serves the interactive band before the bulk one;
//   - fairness: within a band, a take reads at most one entry from each tenant's stream, so a tenant
//     that queued ten thousand files waits its turn beside a tenant that queued one;
//   - durability: an entry stays until a worker acknowledges it (XACK, then XDEL); a worker that dies,
//     or gives an attempt up, holds its entries only until they have been idle for `claim_idle`, then
//     another claims them (XPENDING, XCLAIM); each later attempt waits twice as long as the one before
//     (backoff), the group counts every delivery, and past `max_attempts` the entry goes to the
//     dead-letter stream with its reason. A worker still busy with an entry says so (extend), so a long
//     file is not claimed from under it.
// Each step is one round trip and at most one write (with appendfsync always, one fsync): enqueue is an
// XADD, take an XREADGROUP (and a read of the delivery counts), acknowledge XACK and XDEL pipelined.
// Redis must keep what it acknowledged: run it with appendonly yes, appendfsync always (scripts/cluster).

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/result.h"
#include "queue/redis_connection.h"

namespace kotae::queue {

enum class Priority { interactive, bulk };

using Fields = std::map<std::string, std::string>;

struct QueueEntry {
  std::string stream;  // the Redis key it was read from
  std::string id;      // the stream entry's id ("1733390000000-0")
  Fields fields;
  std::int64_t attempts = 0;  // deliveries so far, this one included
};

struct WorkQueueOptions {
  std::string name = "kotae:ingest";  // the prefix of every key
  std::string group = "workers";
  std::chrono::milliseconds claim_idle{std::chrono::seconds(60)};  // doubled for each attempt already made
  std::int64_t max_attempts = 3;
};

// One stream's state, for /metrics and backpressure.
struct StreamStats {
  std::string stream;
  std::int64_t waiting = 0;   // entries no worker has taken
  std::int64_t pending = 0;   // taken, not acknowledged
  double oldest_age_s = 0;    // of the oldest entry still in the stream
  std::int64_t retrying = 0;  // pending entries delivered more than once (retries), of the first 1000
};

struct QueueStats {
  std::vector<StreamStats> streams;
  std::int64_t waiting = 0, pending = 0, retrying = 0, dead_letters = 0;
  double oldest_age_s = 0;
};

class WorkQueue {
 public:
  // Over one connection: a queue is used by one thread at a time (each worker thread has its own).
  WorkQueue(std::unique_ptr<RedisConnection> connection, WorkQueueOptions options);

  // Adds an entry to the tenant's stream of the given band (creating the stream and its group).
  Result<std::string> enqueue(Priority priority, const std::string& tenant, const Fields& fields);
  // Several entries in one round trip (one fsync); their ids, in order.
  Result<std::vector<std::string>> enqueue_all(Priority priority, const std::string& tenant,
                                               const std::vector<Fields>& entries);
  // The next entries for `consumer`: the interactive band's if any is waiting, else the bulk band's;
  // at most one per tenant stream, and at most `max` in all (0: no cap; with a cap the tenants' streams
  // take turns across takes). When nothing waits, waits up to `block` for an entry (0: returns empty at
  // once); entries that arrive in several streams during that wait all come back, whatever `max`.
  Result<std::vector<QueueEntry>> take(const std::string& consumer,
                                       std::chrono::milliseconds block = std::chrono::milliseconds(0),
                                       std::size_t max = 0);
  // Entries left idle past their backoff (claim_idle × 2^(attempts−1)), because their worker died or
  // gave the attempt up: now this consumer's, at most `count`.
  Result<std::vector<QueueEntry>> claim_abandoned(const std::string& consumer, std::size_t count);
  // `consumer` is still working on these: their idle time starts again (a heartbeat).
  Result<void> extend(const std::vector<QueueEntry>& entries, const std::string& consumer);
  // Done: the entry leaves the queue.
  Result<void> acknowledge(const QueueEntry& entry);
  // Given up: the entry moves to the dead-letter stream with `reason`, and leaves the queue.
  Result<void> dead_letter(const QueueEntry& entry, const std::string& reason);
  // Its first half: the letter is written, the entry stays, so a caller can record the failure
  // elsewhere before acknowledging (a retry may write the letter twice; none is lost).
  Result<void> write_dead_letter(const QueueEntry& entry, const std::string& reason);
  // Whether the entry has used up its attempts (the caller then dead-letters it).
  bool exhausted(const QueueEntry& entry) const { return entry.attempts > options_.max_attempts; }
  Result<std::vector<Fields>> dead_letters(std::size_t count);

  Result<QueueStats> stats();
  const WorkQueueOptions& options() const { return options_; }
  // The connection was lost: make another queue.
  bool broken() const { return connection_->broken(); }
  // The queue's connection, for commands beside the queue's own (an answer task's events).
  RedisConnection& connection() { return *connection_; }

 private:
  std::string streams_key(Priority priority) const;
  std::string dead_key() const { return options_.name + ":dead"; }
  Result<std::vector<std::string>> streams(Priority priority);
  // Deliveries of each entry so far (the consumer group counts them), read without writing.
  Result<void> count_attempts(std::vector<QueueEntry>& entries);
  Result<std::string> stream_for(Priority priority, const std::string& tenant);  // made with its group once
  // One XREADGROUP over `keys`, waiting up to `block` (0: not at all).
  Result<std::vector<QueueEntry>> read_new(const std::vector<std::string>& keys, const std::string& consumer,
                                           std::chrono::milliseconds block);
  // At most `max` entries, one per stream, the streams tried in turn from where the last take left off.
  Result<std::vector<QueueEntry>> read_some(std::vector<std::string> keys, const std::string& consumer,
                                            std::size_t max);

  std::unique_ptr<RedisConnection> connection_;
  WorkQueueOptions options_;
  std::set<std::string> created_;  // streams this connection made (with their group) already
  std::size_t turn_ = 0;           // where a capped take starts among the streams
};

}  // namespace kotae::queue
