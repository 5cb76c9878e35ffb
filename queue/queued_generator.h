#pragma once
// A generator that lives elsewhere: each request becomes an answer task in the work queue
// (queue/answer_task.h), which an answer worker generates; the pieces come back through the task's
// stream as the worker makes them. To the answer pipeline it is one more back-end ("workers"): a task no
// worker starts in time, or whose worker fails or falls silent, is an error, and the next back-end
// answers in its place.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "model/generator.h"
#include "queue/work_queue_pool.h"

namespace kotae::queue {

struct QueuedGeneratorOptions {
  std::chrono::milliseconds wait{std::chrono::seconds(30)};     // for a worker to start a task
  std::chrono::milliseconds silence{std::chrono::seconds(60)};  // between a started task's events
  std::size_t context_tokens = 4096;                            // the workers' model's: prompts are fitted to it
};

class QueuedGenerator final : public Generator {
 public:
  // `queues` are over the answer queue (kAnswerQueue).
  QueuedGenerator(std::shared_ptr<WorkQueuePool> queues, QueuedGeneratorOptions options);

  std::string id() const override;
  std::size_t context_tokens() const override { return options_.context_tokens; }
  std::size_t count_tokens(std::string_view text) const override;  // estimated: the model is elsewhere
  Result<Generation> generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                              const TokenCallback& on_piece = {}) override;

 private:
  std::shared_ptr<WorkQueuePool> queues_;
  QueuedGeneratorOptions options_;
};

}  // namespace kotae::queue
