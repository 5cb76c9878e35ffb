#include "worker/answer_worker.h"

#include <optional>

#include "core/log.h"
#include "core/metrics_snapshot.h"

namespace kotae::worker {

namespace {

using Clock = std::chrono::steady_clock;
using queue::TaskEvent;

}  // namespace

AnswerWorker::AnswerWorker(AnswerWorkerOptions options, Generator& generator)
    : options_(std::move(options)),
      generator_(generator),
      consumer_({.queue_url = options_.queue_url,
                 .queue = options_.queue,
                 .threads = 1,
                 .consumer = options_.consumer,
                 .block = options_.block,
                 .take_max = 1},  // one at a time: the others wait for a free worker
                [this](queue::WorkQueue& queue, const queue::QueueEntry& entry) { handle(queue, entry); }) {}

void AnswerWorker::handle(queue::WorkQueue& queue, const queue::QueueEntry& entry) {
  auto task = queue::read_task(entry.fields);
  if (!task) {
    (void)queue.dead_letter(entry, task.error().message);
    ++counters_.failed;
    return;
  }
  const std::string& name = options_.queue.name;
  const std::string events = queue::task_events_key(name, task->id);
  const std::string gone = queue::task_gone_key(name, task->id);
  queue::RedisConnection& redis = queue.connection();
  auto publish = [&](const TaskEvent& event) {
    std::vector<std::string> add{"XADD", events, "*"};
    for (const auto& [field, value] : queue::event_fields(event)) add.insert(add.end(), {field, value});
    return redis.pipeline({add, {"EXPIRE", events, std::to_string(queue::kTaskKeySeconds)}}).ok();
  };
  auto is_gone = [&] {
    auto exists = redis.command({"EXISTS", gone});
    return exists && exists->integer > 0;
  };
  const nlohmann::json where{{"task", task->id}, {"tenant", task->options.tenant}, {"attempt", entry.attempts}};
  // Counted and logged before its last event goes out: whoever sees the task end finds it counted.
  auto finish = [&](std::atomic<std::uint64_t>& outcome, const char* what,
                    std::optional<TaskEvent> last = std::nullopt) {
    ++outcome;
    log_event("answer_task", {{"where", where}, {"outcome", what}});
    if (last) (void)publish(*last);
    (void)queue.acknowledge(entry);
  };

  // Dropped before any work when no one waits for it any more.
  if (queue::unix_ms() > task->deadline_ms) return finish(counters_.expired, "expired");
  if (is_gone()) return finish(counters_.client_gone, "client_gone");
  if (entry.attempts > 1) {
    auto length = redis.command({"XLEN", events});
    if (!length) return;  // Redis away: claimed again later
    if (length->integer > 0) {
      return finish(counters_.abandoned, "abandoned",
                    TaskEvent{TaskEvent::Kind::failed, "the answer worker generating it stopped mid-answer"});
    }
  }
  if (!publish({TaskEvent::Kind::started, generator_.id()})) return;  // Redis away: claimed again later

  std::string pending;
  Clock::time_point sent{};  // long ago: the first piece goes at once
  auto checked = Clock::now();
  bool cancelled = false;
  auto generated = generator_.generate(task->messages, task->options, [&](std::string_view piece) {
    ++counters_.tokens;
    pending += piece;
    const auto now = Clock::now();
    if (now - checked >= options_.gone_check) {
      checked = now;
      cancelled = is_gone();
      if (cancelled) return false;
    }
    if (now - sent >= options_.coalesce) {
      sent = now;
      (void)publish({TaskEvent::Kind::piece, std::exchange(pending, {})});
    }
    return true;
  });
  if (!pending.empty()) (void)publish({TaskEvent::Kind::piece, pending});
  if (!generated)
    return finish(counters_.failed, "failed", TaskEvent{TaskEvent::Kind::failed, generated.error().message});
  if (cancelled) {
    return finish(counters_.cancelled, "cancelled",
                  TaskEvent{TaskEvent::Kind::failed, "cancelled: no one waits for it any more"});
  }
  TaskEvent done{TaskEvent::Kind::done};
  done.stats = generated->stats;
  finish(counters_.answered, "answered", done);
}

std::string answer_metrics_text(const AnswerWorker& worker) {
  const AnswerCounters& c = worker.counters();
  MetricsSnapshot metrics;
  for (const auto& [outcome, value] : {std::pair{"answered", &c.answered},
                                       {"failed", &c.failed},
                                       {"cancelled", &c.cancelled},
                                       {"client_gone", &c.client_gone},
                                       {"expired", &c.expired},
                                       {"abandoned", &c.abandoned}}) {
    metrics.counter("kotae_answer_tasks_total",
                    "Answer tasks this worker finished, by outcome (client_gone and expired: dropped unstarted).",
                    double(value->load()), {{"outcome", outcome}});
  }
  metrics.counter("kotae_answer_tokens_total", "Tokens this worker generated.", double(c.tokens.load()));
  metrics.gauge("kotae_answer_busy", "Answers being generated now.", double(worker.busy()));
  return metrics.text();
}

}  // namespace kotae::worker
