#include "server/conversation_store.h"

#include <openssl/rand.h>

#include <cstdio>

namespace kotae::server {

std::string random_id(const char* prefix) {
  unsigned char bytes[16];
  RAND_bytes(bytes, sizeof bytes);
  std::string out = prefix;
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    out += hex;
  }
  return out;
}

ConversationStore::ConversationStore(std::size_t capacity, std::chrono::seconds ttl) : capacity_(capacity), ttl_(ttl) {}

std::pair<std::string, std::shared_ptr<StoredConversation>> ConversationStore::create(const std::string& tenant,
                                                                                     const std::string& collection) {
  auto value = std::make_shared<StoredConversation>();
  value->tenant = tenant;
  value->collection = collection;
  std::string id = random_id("conv_");
  std::lock_guard lock(mutex_);
  order_.push_front(id);
  entries_[id] = {value, Clock::now(), order_.begin()};
  evict_locked();
  return {id, value};
}

std::shared_ptr<StoredConversation> ConversationStore::find(const std::string& id, const std::string& tenant) {
  std::lock_guard lock(mutex_);
  evict_locked();
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.value->tenant != tenant) return nullptr;
  it->second.used = Clock::now();
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.value;
}

void ConversationStore::evict_locked() {
  const auto now = Clock::now();
  while (!order_.empty()) {
    auto& oldest = entries_.at(order_.back());
    if (entries_.size() <= capacity_ && now - oldest.used < ttl_) break;
    entries_.erase(order_.back());
    order_.pop_back();
  }
}

}  // namespace kotae::server
