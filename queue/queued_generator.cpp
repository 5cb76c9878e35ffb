#include "queue/queued_generator.h"

#include <cstdio>

#include "core/random_id.h"
#include "model/token_estimate.h"
#include "queue/answer_task.h"

namespace kotae::queue {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kPollMs = "200";  // how often a wait looks at its client (GenerationOptions::wanted)

std::string seconds(std::chrono::milliseconds time) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(time.count()) / 1000);
  return text;
}

}  // namespace

QueuedGenerator::QueuedGenerator(std::shared_ptr<WorkQueuePool> queues, QueuedGeneratorOptions options)
    : queues_(std::move(queues)), options_(options) {}

std::string QueuedGenerator::id() const {
  return "workers:" + queues_->options().name;
}

std::size_t QueuedGenerator::count_tokens(std::string_view text) const {
  return estimate_tokens(text);
}

Result<Generation> QueuedGenerator::generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                                             const TokenCallback& on_piece) {
  AnswerTask task{random_id("task_"), {messages.begin(), messages.end()}, options, unix_ms() + options_.wait.count()};
  const std::string tenant = options.tenant.empty() ? "local" : options.tenant;
  KOTAE_TRY(
      queues_->with_queue([&](WorkQueue& q) { return q.enqueue(Priority::interactive, tenant, task_fields(task)); }));
  auto lease = KOTAE_TRY_VALUE(queues_->acquire());

  const std::string& queue = queues_->options().name;
  const std::string events = task_events_key(queue, task.id);
  RedisConnection& redis = lease->connection();
  Generation out;
  // No one waits for it any more: the worker drops it (before it starts, or at its next piece).
  auto give_up = [&] {
    (void)redis.command({"SET", task_gone_key(queue, task.id), "1", "EX", std::to_string(kTaskKeySeconds)});
  };
  auto cancelled = [&] {
    give_up();
    out.stats.finish_reason = "cancelled";
    return out;
  };

  const auto start_by = Clock::now() + options_.wait;
  auto heard = Clock::now();
  bool started = false;
  std::string last = "0";
  while (true) {
    if (options.wanted && !options.wanted()) return cancelled();
    auto reply = redis.command({"XREAD", "COUNT", "256", "BLOCK", kPollMs, "STREAMS", events, last});
    if (!reply) {
      give_up();
      return reply.error();
    }
    const auto now = Clock::now();
    if (reply->elements.empty()) {
      if (!started && now >= start_by) {
        give_up();
        return make_error(ErrorCode::unavailable, "no answer worker started the task within " + seconds(options_.wait));
      }
      if (started && now - heard >= options_.silence) {
        give_up();
        return make_error(ErrorCode::unavailable, "the answer worker fell silent for " + seconds(options_.silence));
      }
      continue;
    }
    heard = now;
    // [[stream, [[id, [field, value, ...]], ...]]]
    for (const auto& entry : reply->elements[0].elements.at(1).elements) {
      last = entry.elements.at(0).text;
      Fields fields;
      const auto& pairs = entry.elements.at(1).elements;
      for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) fields[pairs[i].text] = pairs[i + 1].text;
      TaskEvent event = read_event(fields);
      switch (event.kind) {
        case TaskEvent::Kind::started: started = true; break;
        case TaskEvent::Kind::piece:
          out.text += event.text;
          if (on_piece && !on_piece(event.text)) return cancelled();
          break;
        case TaskEvent::Kind::done:
          out.stats = event.stats;
          (void)redis.command({"DEL", events});
          return out;
        case TaskEvent::Kind::failed:
          (void)redis.command({"DEL", events});
          return make_error(ErrorCode::unavailable, "answer worker: " + event.text);
      }
    }
  }
}

}  // namespace kotae::queue
