#pragma once
// The change follower over SQLite (store/change_follower.h): a thread with a connection of its own to
// FOLDER/server.db reads its data_version every few milliseconds, which moves whenever another
// connection commits (another process, or this one's other connections), and calls `on_change` then,
// and at least every `period`.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "store/change_follower.h"
#include "store/sqlite_database.h"

namespace kotae::store {

class SqliteChangeFollower final : public ChangeFollower {
 public:
  static Result<std::unique_ptr<SqliteChangeFollower>> start(const std::filesystem::path& folder,
                                                             std::chrono::milliseconds period,
                                                             std::function<void()> on_change);
  ~SqliteChangeFollower() override;  // stops within a poll

  std::uint64_t notifications() const override { return notifications_.load(); }

 private:
  SqliteChangeFollower(std::unique_ptr<Database> db, std::chrono::milliseconds period, std::function<void()> on_change);
  void run();
  std::unique_ptr<Database> db_;
  std::chrono::milliseconds period_;
  std::function<void()> on_change_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> notifications_{0};
  std::thread thread_;
};

}  // namespace kotae::store
