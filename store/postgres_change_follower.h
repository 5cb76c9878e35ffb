#pragma once
// The change follower over PostgreSQL (store/change_follower.h): a thread with a connection of its own
// LISTENs on the store's change channel and calls `on_change` as soon as another process commits, and
// at least every `period` whatever it heard (a notification sent while the connection was down is never delivered;
// the periodic call catches what it announced). A lost connection is opened again by itself.

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "store/change_follower.h"

namespace kotae::store {

class PostgresChangeFollower final : public ChangeFollower {
 public:
  PostgresChangeFollower(std::string url, std::chrono::milliseconds period, std::function<void()> on_change);
  ~PostgresChangeFollower() override;  // stops within a fraction of a second

  std::uint64_t notifications() const override { return notifications_.load(); }

 private:
  void run();
  std::string url_;
  std::chrono::milliseconds period_;
  std::function<void()> on_change_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> notifications_{0};
  std::thread thread_;
};

}  // namespace kotae::store
