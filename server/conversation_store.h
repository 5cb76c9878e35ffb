#pragma once
// Conversations kept between requests, so a follow-up question (POST /v1/ask with a conversation_id)
// keeps its source numbering and history. Bounded per tenant, so one tenant's conversations never push
// out another's: beyond `per_tenant` the tenant's least recently used is dropped, and any unused for
// `ttl` goes.

#include <atomic>
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "rag/source.h"

namespace kotae::server {

struct StoredConversation {
  std::string tenant;
  std::string collection;
  std::atomic<bool> answering = false;  // one question at a time per conversation
  rag::Conversation conversation;
};

class ConversationStore {
 public:
  static constexpr std::size_t kMaxTurns = 64;  // a conversation past this must start again

  ConversationStore(std::size_t per_tenant = 1000, std::chrono::seconds ttl = std::chrono::hours(1));

  // A new conversation with a fresh random id.
  std::pair<std::string, std::shared_ptr<StoredConversation>> create(const std::string& tenant, const std::string& collection);
  // Null when unknown, expired, or another tenant's.
  std::shared_ptr<StoredConversation> find(const std::string& id, const std::string& tenant);

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::shared_ptr<StoredConversation> value;
    Clock::time_point used;
    std::list<std::string>::iterator position;
  };
  struct TenantConversations {
    std::list<std::string> order;  // most recently used first
    std::unordered_map<std::string, Entry> entries;
  };
  void evict_locked(TenantConversations& conversations);

  std::size_t per_tenant_;
  std::chrono::seconds ttl_;
  std::mutex mutex_;
  std::map<std::string, TenantConversations> tenants_;
};

}  // namespace kotae::server
