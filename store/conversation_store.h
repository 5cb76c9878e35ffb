#pragma once
// Where conversations are kept, per tenant, so a follow-up question (POST /v1/ask with a
// conversation_id) goes on after a restart and on any replica, and GET /v1/conversations lists them:
// a SQLite file in the data directory (store/sqlite_conversations.h) or, over a shared store,
// PostgreSQL's table `conversations` (store/postgres_conversations.h). A conversation is stored once
// its first question is answered and rewritten after each answer; they do not expire, but beyond
// `per_tenant` a tenant's least recently updated go (never another tenant's). Every call names the
// owner: another tenant's or another person's conversation is as absent as one that never was.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include "core/result.h"

namespace kotae::store {

struct ConversationSummary {
  std::string id;
  std::string collection;
  std::string title;
  double created_at = 0;  // when its first turn was answered
  double updated_at = 0;  // when it last changed: a turn answered, or renamed
  std::size_t turns = 0;
};

// Whose conversations: a tenant's, and within it one person's or key's (an actor: "user:ID",
// "key:NAME"). Conversations of a server without principals, and those stored before there were any,
// have no person and are the whole tenant's.
struct ConversationOwner {
  ConversationOwner(std::string tenant_name, std::string person_name = "")
      : tenant(std::move(tenant_name)), person(std::move(person_name)) {}
  ConversationOwner(const char* tenant_name) : tenant(tenant_name) {}
  std::string tenant;
  std::string person;
};

struct ConversationRecord {
  ConversationSummary summary;
  nlohmann::json turns = nlohmann::json::array();
};

class ConversationStore {
 public:
  // A conversation at either limit must start again: the turns a prompt may build on, and what one
  // stored conversation may take.
  static constexpr std::size_t kMaxTurns = 64;
  static constexpr std::size_t kMaxStoredBytes = 4 << 20;

  virtual ~ConversationStore() = default;

  // Stores a new conversation, then deletes the tenant's least recently updated beyond the bound.
  virtual Result<void> create(const ConversationOwner& owner, const ConversationRecord& record) = 0;
  // Stores the turns (and updated_at) of a conversation that had `turns_before` turns; title and
  // creation stay. false when it is gone, or another question was answered meanwhile (on another
  // replica): nothing is written then.
  virtual Result<bool> update_turns(const ConversationOwner& owner, const ConversationRecord& record,
                                    std::size_t turns_before) = 0;
  virtual Result<std::optional<ConversationRecord>> get(const ConversationOwner& owner, const std::string& id) = 0;
  // Most recently updated first; `collection` empty: every collection's.
  virtual Result<std::vector<ConversationSummary>> list(const ConversationOwner& owner, const std::string& collection,
                                                        std::size_t limit) = 0;
  // Sets the title (and updated_at); nullopt when there is no such conversation.
  virtual Result<std::optional<ConversationSummary>> rename(const ConversationOwner& owner, const std::string& id,
                                                            const std::string& title, double at) = 0;
  // false when there was no such conversation.
  virtual Result<bool> remove(const ConversationOwner& owner, const std::string& id) = 0;
  // Every conversation about the collection (it was deleted).
  virtual Result<void> remove_collection(const std::string& tenant, const std::string& collection) = 0;
  // Every conversation about the collection follows it to its new name (their owners and times stay).
  virtual Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to) = 0;
};

}  // namespace kotae::store
