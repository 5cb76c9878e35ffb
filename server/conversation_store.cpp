#include "server/conversation_store.h"

#include "core/random_id.h"

namespace kotae::server {

ConversationStore::ConversationStore(std::size_t per_tenant, std::chrono::seconds ttl) : per_tenant_(per_tenant), ttl_(ttl) {}

std::pair<std::string, std::shared_ptr<StoredConversation>> ConversationStore::create(const std::string& tenant,
                                                                                     const std::string& collection) {
  auto value = std::make_shared<StoredConversation>();
  value->tenant = tenant;
  value->collection = collection;
  std::string id = random_id("conv_");
  std::lock_guard lock(mutex_);
  auto& mine = tenants_[tenant];
  mine.order.push_front(id);
  mine.entries[id] = {value, Clock::now(), mine.order.begin()};
  evict_locked(mine);
  return {id, value};
}

std::shared_ptr<StoredConversation> ConversationStore::find(const std::string& id, const std::string& tenant) {
  std::lock_guard lock(mutex_);
  const auto found = tenants_.find(tenant);
  if (found == tenants_.end()) return nullptr;
  auto& mine = found->second;
  evict_locked(mine);
  auto it = mine.entries.find(id);
  if (it == mine.entries.end()) return nullptr;
  it->second.used = Clock::now();
  mine.order.splice(mine.order.begin(), mine.order, it->second.position);
  return it->second.value;
}

void ConversationStore::evict_locked(TenantConversations& mine) {
  const auto now = Clock::now();
  while (!mine.order.empty()) {
    auto& oldest = mine.entries.at(mine.order.back());
    if (mine.entries.size() <= per_tenant_ && now - oldest.used < ttl_) break;
    mine.entries.erase(mine.order.back());
    mine.order.pop_back();
  }
}

}  // namespace kotae::server
