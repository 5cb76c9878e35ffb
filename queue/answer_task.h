#pragma once
// Answers generated elsewhere: what an API replica and an answer worker (`kotae worker --answers`) say to
// each other through Redis. The replica retrieves and builds the prompt; its generation is a task in the
// work queue "kotae:answers" (one stream per tenant, so tenants take turns). A worker generates it with
// its own model and writes what it makes to a stream of the task's own, which the replica reads as it
// streams the answer to its client:
//   task entry        task (id), messages and options (JSON), deadline_ms (after it no one waits: dropped)
//   NAME:task:ID      the task's events, in order: started, piece..., then done or failed
//   NAME:task:ID:gone set by the replica when its client went away or it stopped waiting: the worker
//                     drops the task before it starts, or stops it at its next piece
// Both keys expire (kTaskKeySeconds): a task leaves nothing behind in Redis.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/generator.h"
#include "queue/work_queue.h"

namespace kotae::queue {

inline constexpr const char* kAnswerQueue = "kotae:answers";
inline constexpr int kTaskKeySeconds = 600;

struct AnswerTask {
  std::string id;
  std::vector<ChatMessage> messages;
  GenerationOptions options;     // those that travel: limits, sampling, stop, cache owner, tenant
  std::int64_t deadline_ms = 0;  // Unix milliseconds
};

Fields task_fields(const AnswerTask& task);
// invalid_argument for an entry that is not an answer task.
Result<AnswerTask> read_task(const Fields& fields);

std::string task_events_key(const std::string& queue, const std::string& task);
std::string task_gone_key(const std::string& queue, const std::string& task);

// One event of a task's stream.
struct TaskEvent {
  enum class Kind { started, piece, done, failed };
  Kind kind = Kind::failed;
  std::string text = {};       // piece: the text; failed: the reason; started: the generator's id
  GenerationStats stats = {};  // done
};
Fields event_fields(const TaskEvent& event);
TaskEvent read_event(const Fields& fields);  // an unknown event reads as failed

std::int64_t unix_ms();

}  // namespace kotae::queue
