#pragma once
// Conversations in the SQLite back-end's own file (FOLDER/server.db, store/sqlite_schema.h): the
// embedded store's (store/conversation_store.h). Every tenant's in one table, indexed by (tenant,
// updated_at). 0.1's FOLDER/conversations.db is imported at the first open.
// One connection, one call at a time; WAL and a busy timeout, so two servers on one data directory
// take turns.

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/conversation_store.h"
#include "store/schema_steps.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Its tables (store/sqlite_schema.h).
const SchemaSteps& sqlite_conversations_schema();

class SqliteConversations final : public ConversationStore {
 public:
  // Creates the file and its table when missing.
  static Result<std::unique_ptr<SqliteConversations>> open(const std::filesystem::path& folder, std::size_t per_tenant);

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
  SqliteConversations(std::unique_ptr<Database> db, std::size_t per_tenant)
      : db_(std::move(db)), per_tenant_(per_tenant) {}

  std::mutex mutex_;  // guards the connection
  std::unique_ptr<Database> db_;
  std::size_t per_tenant_;
};

}  // namespace kotae::store
