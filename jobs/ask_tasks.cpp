#include "jobs/ask_tasks.h"

namespace kotae::jobs {

AskTasks::AskTasks(std::shared_ptr<queue::WorkQueuePool> redis, std::chrono::seconds keep, std::size_t max_kept)
    : redis_(std::move(redis)), keep_(keep), max_kept_(max_kept) {}

Result<void> AskTasks::put(const nlohmann::json& record) {
  const std::string id = record.at("id").get<std::string>();
  if (redis_) {
    const std::vector<std::string> set{"SET", key(id), record.dump(), "EX", std::to_string(keep_.count())};
    KOTAE_TRY(redis_->with_queue([&](queue::WorkQueue& q) { return q.connection().command(set); }));
    return {};
  }
  std::lock_guard lock(mutex_);
  if (!kept_.contains(id)) order_.push_back(id);
  kept_[id] = {record, std::chrono::steady_clock::now()};
  while (order_.size() > max_kept_) {
    kept_.erase(order_.front());
    order_.pop_front();
  }
  return {};
}

Result<std::optional<nlohmann::json>> AskTasks::get(const std::string& id) {
  if (redis_) {
    auto value = KOTAE_TRY_VALUE(redis_->with_queue([&](queue::WorkQueue& q) {
      return q.connection().command({"GET", key(id)});
    }));
    if (value.is_nil()) return std::optional<nlohmann::json>();
    return std::optional(nlohmann::json::parse(value.text, nullptr, false));
  }
  std::lock_guard lock(mutex_);
  auto found = kept_.find(id);
  if (found == kept_.end() || std::chrono::steady_clock::now() - found->second.written > keep_) {
    return std::optional<nlohmann::json>();
  }
  return std::optional(found->second.record);
}

}  // namespace kotae::jobs
