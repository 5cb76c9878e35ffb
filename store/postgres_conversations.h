#pragma once
// Over a shared store, conversations in PostgreSQL (table `conversations`, schema version 2), so a
// conversation begun on one replica goes on, and is listed, on any other
// (store/conversation_store.h).

#include <memory>

#include "store/conversation_store.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_conversations_schema();

class PostgresConversations final : public ConversationStore {
 public:
  PostgresConversations(std::shared_ptr<PgPool> pool, std::size_t per_tenant)
      : pool_(std::move(pool)), per_tenant_(per_tenant) {}

  Result<void> create(const ConversationOwner& owner, const ConversationRecord& record) override;
  Result<bool> update_turns(const ConversationOwner& owner, const ConversationRecord& record,
                            std::size_t turns_before) override;
  Result<std::optional<ConversationRecord>> get(const ConversationOwner& owner, const std::string& id) override;
  Result<std::vector<ConversationSummary>> list(const ConversationOwner& owner, const std::string& collection,
                                                std::size_t limit) override;
  Result<std::optional<ConversationSummary>> rename(const ConversationOwner& owner, const std::string& id,
                                                    const std::string& title, double at) override;
  Result<bool> remove(const ConversationOwner& owner, const std::string& id) override;
  Result<void> remove_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to) override;

 private:
  std::shared_ptr<PgPool> pool_;
  std::size_t per_tenant_;
};

}  // namespace kotae::store
