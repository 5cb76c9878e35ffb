#include "worker/queue_consumer.h"

#include <algorithm>

#include "core/log.h"

namespace kotae::worker {

namespace {

using Milliseconds = std::chrono::milliseconds;

constexpr Milliseconds kRedisReconnectWait{1000};  // after Redis was out of reach

// How often a thread looks for abandoned entries, and the heartbeat for held ones: well inside the
// claim time, so a live worker's entry is never taken from it.
Milliseconds claim_period(const queue::WorkQueueOptions& q) {
  return std::clamp(q.claim_idle / 4, Milliseconds(50), Milliseconds(5000));
}

}  // namespace

QueueConsumer::QueueConsumer(QueueConsumerOptions options, EntryHandler handle)
    : options_(std::move(options)), handle_(std::move(handle)) {
  const std::size_t threads = std::max<std::size_t>(options_.threads, 1);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this, i] { work(i); });
  threads_.emplace_back([this] { heartbeat(); });
}

QueueConsumer::~QueueConsumer() {
  stop();
}

void QueueConsumer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

bool QueueConsumer::sleep_unless_stopped(Milliseconds time) {
  std::unique_lock lock(mutex_);
  return !stopped_.wait_for(lock, time, [this] { return stopping_.load(); });
}

std::string QueueConsumer::consumer(std::size_t thread) const {
  return options_.consumer + "-" + std::to_string(thread);
}

void QueueConsumer::hold(std::size_t thread, const queue::QueueEntry* entry) {
  std::lock_guard lock(mutex_);
  if (entry)
    held_[thread] = *entry;
  else
    held_.erase(thread);
}

void QueueConsumer::heartbeat() {
  std::unique_ptr<queue::WorkQueue> queue;
  while (sleep_unless_stopped(claim_period(options_.queue))) {
    std::map<std::size_t, queue::QueueEntry> held;
    {
      std::lock_guard lock(mutex_);
      held = held_;
    }
    if (held.empty()) continue;
    if (!queue || queue->broken()) {
      auto connection = queue::RedisConnection::connect(options_.queue_url);
      if (!connection) continue;
      queue = std::make_unique<queue::WorkQueue>(std::move(*connection), options_.queue);
    }
    for (const auto& [thread, entry] : held) (void)queue->extend({entry}, consumer(thread));
  }
}

void QueueConsumer::work(std::size_t thread) {
  const std::string me = consumer(thread);
  std::unique_ptr<queue::WorkQueue> queue;
  auto next_claim = std::chrono::steady_clock::now();
  while (!stopping_) {
    if (!queue || queue->broken()) {
      auto connection = queue::RedisConnection::connect(options_.queue_url);
      if (!connection) {
        connected_ = false;
        log_event("queue_unavailable", {{"consumer", me}, {"reason", connection.error().message}}, LogLevel::warn);
        sleep_unless_stopped(kRedisReconnectWait);
        continue;
      }
      queue = std::make_unique<queue::WorkQueue>(std::move(*connection), options_.queue);
    }
    Result<std::vector<queue::QueueEntry>> entries = std::vector<queue::QueueEntry>();
    if (std::chrono::steady_clock::now() >= next_claim) {
      entries = queue->claim_abandoned(me, 1);
      next_claim = std::chrono::steady_clock::now() + claim_period(options_.queue);
    }
    if (entries && entries->empty()) entries = queue->take(me, options_.block, options_.take_max);
    if (!entries) {
      connected_ = false;
      log_event("queue_unavailable", {{"consumer", me}, {"reason", entries.error().message}}, LogLevel::warn);
      sleep_unless_stopped(kRedisReconnectWait);
      continue;
    }
    connected_ = true;
    for (const auto& entry : *entries) {
      if (stopping_) break;  // not begun: another worker claims it after the claim time
      hold(thread, &entry);
      ++busy_;
      handle_(*queue, entry);
      --busy_;
      hold(thread, nullptr);
    }
  }
}

}  // namespace kotae::worker
