#pragma once
// A worker process's answers (`kotae worker --answers`): takes answer tasks (queue/answer_task.h) that API
// replicas queued, generates each with this machine's model (a local GGUF, on its GPU where it has one),
// and writes the pieces to the task's stream as they come, then done or failed; only then acknowledges.
//
// Nothing is generated for no one: a task past its deadline (its replica stopped waiting) or marked gone
// (its client went away) is dropped before it starts, and one marked gone while it runs stops at its next
// piece. A task whose worker died mid-answer is claimed by another after the claim time, which tells the
// replica it failed (the replica then answers with its next back-end): generating it again would repeat
// the pieces the client already has. One that died before starting is simply generated.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "assembly/answering.h"
#include "queue/answer_task.h"
#include "worker/queue_consumer.h"

namespace kotae::worker {

struct AnswerWorkerOptions {
  std::string queue_url;
  queue::WorkQueueOptions queue = {
      .name = queue::kAnswerQueue, .claim_idle = std::chrono::seconds(10), .max_attempts = 2};
  std::string consumer;                       // this process in the consumer group
  std::chrono::milliseconds coalesce{25};     // pieces made within this go out in one write
  std::chrono::milliseconds gone_check{250};  // how often a running task looks whether it is still wanted
  std::chrono::milliseconds block{500};
};

struct AnswerCounters {
  // Tasks by outcome: answered; failed (the model refused it); cancelled (gone while it ran); client_gone
  // and expired (dropped before they started); abandoned (their worker died mid-answer).
  std::atomic<std::uint64_t> answered{0}, failed{0}, cancelled{0}, client_gone{0}, expired{0}, abandoned{0};
  std::atomic<std::uint64_t> tokens{0};
};

class AnswerWorker {
 public:
  // The generator is borrowed; it answers one task at a time.
  AnswerWorker(AnswerWorkerOptions options, Generator& generator);

  void stop() { consumer_.stop(); }
  bool ready() const { return consumer_.ready(); }
  const AnswerCounters& counters() const { return counters_; }
  std::size_t busy() const { return consumer_.busy(); }

 private:
  void handle(queue::WorkQueue& queue, const queue::QueueEntry& entry);

  AnswerWorkerOptions options_;
  Generator& generator_;
  AnswerCounters counters_;
  QueueConsumer consumer_;  // last: its threads start once the rest is made
};

std::string answer_metrics_text(const AnswerWorker& worker);

}  // namespace kotae::worker
