#include "store/postgres_conversations.h"

#include "store/conversation_sql.h"

namespace kotae::store {

const SchemaSteps& postgres_conversations_schema() {
  // Version 1 (times are unix seconds, the turns one JSON text).
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS conversations(
  id text PRIMARY KEY,
  tenant text NOT NULL,
  collection text NOT NULL,
  title text NOT NULL,
  created_at double precision NOT NULL,
  updated_at double precision NOT NULL,
  turn_count bigint NOT NULL,
  turns text NOT NULL);
CREATE INDEX IF NOT EXISTS conversations_by_tenant ON conversations(tenant, updated_at);
)sql";
  // Version 2: each conversation's owner, a person or key ('': the whole tenant's, as before).
  static constexpr const char* kVersion2 = R"sql(
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS owner text NOT NULL DEFAULT '';
)sql";
  static constexpr const char* kSteps[] = {kVersion1, kVersion2};
  static const SchemaSteps schema{"conversations", kSteps};
  return schema;
}
namespace {

namespace sql = conversation_sql;

ConversationSummary read_summary(const PgResult& rows, std::size_t row) {
  return {std::string(rows.text(row, 0)), std::string(rows.text(row, 1)), std::string(rows.text(row, 2)),
          rows.float64(row, 3),           rows.float64(row, 4),           static_cast<std::size_t>(rows.int64(row, 5))};
}

}  // namespace

Result<void> PostgresConversations::create(const ConversationOwner& owner, const ConversationRecord& record) {
  const auto& s = record.summary;
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(sql::kInsert, PgParams()
                                           .add(s.id)
                                           .add(owner.tenant)
                                           .add(s.collection)
                                           .add(s.title)
                                           .add_float64(s.created_at)
                                           .add_float64(s.updated_at)
                                           .add(sql::int64(s.turns))
                                           .add(record.turns.dump())
                                           .add(owner.person)));
  KOTAE_TRY(lease->query(sql::kTrim, PgParams().add(owner.tenant).add(sql::int64(per_tenant_))));
  return {};
}

Result<bool> PostgresConversations::update_turns(const ConversationOwner& owner, const ConversationRecord& record,
                                                 std::size_t turns_before) {
  const auto& s = record.summary;
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(sql::kUpdateTurns, PgParams()
                                                                  .add(record.turns.dump())
                                                                  .add(sql::int64(s.turns))
                                                                  .add_float64(s.updated_at)
                                                                  .add(s.id)
                                                                  .add(owner.tenant)
                                                                  .add(sql::int64(turns_before))
                                                                  .add(owner.person)));
  return rows.rows() > 0;
}

Result<std::optional<ConversationRecord>> PostgresConversations::get(const ConversationOwner& owner,
                                                                     const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(sql::kGet, PgParams().add(id).add(owner.tenant).add(owner.person)));
  if (rows.rows() == 0) return std::optional<ConversationRecord>();
  ConversationRecord record{read_summary(rows, 0), nlohmann::json::parse(rows.text(0, 6), nullptr, false)};
  if (record.turns.is_discarded()) {
    return make_error(ErrorCode::corrupt, "conversation '" + id + "': its turns are not JSON");
  }
  return std::optional(std::move(record));
}

Result<std::vector<ConversationSummary>> PostgresConversations::list(const ConversationOwner& owner,
                                                                     const std::string& collection, std::size_t limit) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query(sql::kList, PgParams().add(owner.tenant).add(collection).add(owner.person).add(sql::int64(limit))));
  std::vector<ConversationSummary> out;
  for (std::size_t i = 0; i < rows.rows(); ++i) out.push_back(read_summary(rows, i));
  return out;
}

Result<std::optional<ConversationSummary>> PostgresConversations::rename(const ConversationOwner& owner,
                                                                         const std::string& id,
                                                                         const std::string& title, double at) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query(sql::kRename, PgParams().add(title).add_float64(at).add(id).add(owner.tenant).add(owner.person)));
  if (rows.rows() == 0) return std::optional<ConversationSummary>();
  return std::optional(read_summary(rows, 0));
}

Result<bool> PostgresConversations::remove(const ConversationOwner& owner, const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(sql::kRemove, PgParams().add(id).add(owner.tenant).add(owner.person)));
  return rows.rows() > 0;
}

Result<void> PostgresConversations::remove_collection(const std::string& tenant, const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(sql::kRemoveCollection, PgParams().add(tenant).add(collection)));
  return {};
}

Result<void> PostgresConversations::rename_collection(const std::string& tenant, const std::string& from,
                                                      const std::string& to) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(sql::kRenameCollection, PgParams().add(to).add(tenant).add(from)));
  return {};
}

}  // namespace kotae::store
