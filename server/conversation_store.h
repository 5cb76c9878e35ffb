#pragma once
// Conversations kept between requests, so a follow-up question (POST /v1/ask with a conversation_id)
// keeps its source numbering and history. Bounded: the least recently used is dropped beyond
// `capacity`, and any unused for `ttl`.

#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "rag/source.h"

namespace kotae::server {

struct StoredConversation {
  std::string tenant;
  std::string collection;
  std::mutex mutex;  // one question at a time per conversation
  rag::Conversation conversation;
};

class ConversationStore {
 public:
  ConversationStore(std::size_t capacity = 1000, std::chrono::seconds ttl = std::chrono::hours(1));

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
  void evict_locked();

  std::size_t capacity_;
  std::chrono::seconds ttl_;
  std::mutex mutex_;
  std::list<std::string> order_;  // most recently used first
  std::unordered_map<std::string, Entry> entries_;
};

// 128 random bits, hex, with a prefix: "conv_3f9a...".
std::string random_id(const char* prefix);

}  // namespace kotae::server
