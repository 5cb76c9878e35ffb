#pragma once
// The conversations this replica is answering a question of, by tenant and id: one question at a
// time per conversation, so a second one meanwhile is refused (409) rather than answered from a
// history that lacks the first. Per replica: two replicas asked at once each answer, and the store
// keeps the turn recorded first (ConversationStore::update_turns).

#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace kotae::server {

class BusyConversations {
 public:
  // false when the conversation is already answering.
  bool claim(const std::string& tenant, const std::string& id) {
    std::lock_guard lock(mutex_);
    return busy_.emplace(tenant, id).second;
  }
  void release(const std::string& tenant, const std::string& id) {
    std::lock_guard lock(mutex_);
    busy_.erase({tenant, id});
  }

 private:
  std::mutex mutex_;
  std::set<std::pair<std::string, std::string>> busy_;
};

}  // namespace kotae::server
