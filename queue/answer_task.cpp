#include "queue/answer_task.h"

#include <chrono>

#include <nlohmann/json.hpp>

namespace kotae::queue {

namespace {

using nlohmann::json;

std::string field(const Fields& fields, const char* name) {
  auto it = fields.find(name);
  return it == fields.end() ? std::string() : it->second;
}

const char* kind_name(TaskEvent::Kind kind) {
  switch (kind) {
    case TaskEvent::Kind::started: return "started";
    case TaskEvent::Kind::piece: return "piece";
    case TaskEvent::Kind::done: return "done";
    case TaskEvent::Kind::failed: return "failed";
  }
  return "failed";
}

}  // namespace

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string task_events_key(const std::string& queue, const std::string& task) {
  return queue + ":task:" + task;
}
std::string task_gone_key(const std::string& queue, const std::string& task) {
  return queue + ":task:" + task + ":gone";
}

Fields task_fields(const AnswerTask& task) {
  json messages = json::array();
  for (const auto& m : task.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  const GenerationOptions& o = task.options;
  json options{{"max_tokens", o.max_tokens},
               {"temperature", o.temperature},
               {"top_p", o.top_p},
               {"stop", o.stop},
               {"cache_owner", o.cache_owner},
               {"tenant", o.tenant}};
  if (o.seed) options["seed"] = *o.seed;
  auto dump = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); };
  return {{"task", task.id},
          {"messages", dump(messages)},
          {"options", dump(options)},
          {"deadline_ms", std::to_string(task.deadline_ms)}};
}

Result<AnswerTask> read_task(const Fields& fields) {
  try {
    AnswerTask task;
    task.id = field(fields, "task");
    if (task.id.empty()) throw std::invalid_argument("no task id");
    for (const auto& m : json::parse(field(fields, "messages"))) {
      task.messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
    }
    const json o = json::parse(field(fields, "options"));
    GenerationOptions& options = task.options;
    options.max_tokens = o.at("max_tokens").get<int>();
    options.temperature = o.at("temperature").get<float>();
    options.top_p = o.at("top_p").get<float>();
    options.stop = o.at("stop").get<std::vector<std::string>>();
    options.cache_owner = o.at("cache_owner").get<std::string>();
    options.tenant = o.at("tenant").get<std::string>();
    if (o.contains("seed")) options.seed = o.at("seed").get<std::uint32_t>();
    task.deadline_ms = std::stoll(field(fields, "deadline_ms"));
    return task;
  } catch (const std::exception& e) {
    return make_error(ErrorCode::invalid_argument, std::string("not an answer task: ") + e.what());
  }
}

Fields event_fields(const TaskEvent& event) {
  Fields fields{{"event", kind_name(event.kind)}};
  if (event.kind == TaskEvent::Kind::done) {
    const GenerationStats& s = event.stats;
    fields["stats"] = json{{"prompt_tokens", s.prompt_tokens},       {"reused_prompt_tokens", s.reused_prompt_tokens},
                           {"generated_tokens", s.generated_tokens}, {"prompt_ms", s.prompt_ms},
                           {"generation_ms", s.generation_ms},       {"finish_reason", s.finish_reason}}
                          .dump();
  } else {
    fields["text"] = event.text;
  }
  return fields;
}

TaskEvent read_event(const Fields& fields) {
  TaskEvent event;
  const std::string kind = field(fields, "event");
  event.text = field(fields, "text");
  if (kind == "started") {
    event.kind = TaskEvent::Kind::started;
  } else if (kind == "piece") {
    event.kind = TaskEvent::Kind::piece;
  } else if (kind == "done") {
    event.kind = TaskEvent::Kind::done;
    try {
      const json s = json::parse(field(fields, "stats"));
      event.stats.prompt_tokens = s.at("prompt_tokens").get<std::size_t>();
      event.stats.reused_prompt_tokens = s.at("reused_prompt_tokens").get<std::size_t>();
      event.stats.generated_tokens = s.at("generated_tokens").get<std::size_t>();
      event.stats.prompt_ms = s.at("prompt_ms").get<double>();
      event.stats.generation_ms = s.at("generation_ms").get<double>();
      event.stats.finish_reason = s.at("finish_reason").get<std::string>();
    } catch (const std::exception& e) {
      event.kind = TaskEvent::Kind::failed;
      event.text = std::string("the worker's result is malformed: ") + e.what();
    }
  } else if (kind != "failed") {
    event.text = "an unknown event '" + kind + "'";
  }
  return event;
}

}  // namespace kotae::queue
