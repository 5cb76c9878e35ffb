#include "server/shared_conversations.h"

#include "server/conversation_sql.h"

namespace kotae::server {
namespace {

namespace sql = conversation_sql;

ConversationSummary read_summary(const store::PgResult& rows, std::size_t row) {
  return {std::string(rows.text(row, 0)), std::string(rows.text(row, 1)), std::string(rows.text(row, 2)),
          rows.float64(row, 3),           rows.float64(row, 4),           static_cast<std::size_t>(rows.int64(row, 5))};
}

std::int64_t int64(std::size_t n) {
  return static_cast<std::int64_t>(n);
}

}  // namespace

Result<void> SharedConversations::create(const std::string& tenant, const ConversationRecord& record) {
  const auto& s = record.summary;
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(sql::kInsert, store::PgParams()
                                           .add(s.id)
                                           .add(tenant)
                                           .add(s.collection)
                                           .add(s.title)
                                           .add_float64(s.created_at)
                                           .add_float64(s.updated_at)
                                           .add(int64(s.turns))
                                           .add(record.turns.dump())));
  KOTAE_TRY(lease->query(sql::kTrim, store::PgParams().add(tenant).add(int64(per_tenant_))));
  return {};
}

Result<bool> SharedConversations::update_turns(const std::string& tenant, const ConversationRecord& record,
                                               std::size_t turns_before) {
  const auto& s = record.summary;
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(sql::kUpdateTurns, store::PgParams()
                                                                  .add(record.turns.dump())
                                                                  .add(int64(s.turns))
                                                                  .add_float64(s.updated_at)
                                                                  .add(s.id)
                                                                  .add(tenant)
                                                                  .add(int64(turns_before))));
  return rows.rows() > 0;
}

Result<std::optional<ConversationRecord>> SharedConversations::get(const std::string& tenant, const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(sql::kGet, store::PgParams().add(id).add(tenant)));
  if (rows.rows() == 0) return std::optional<ConversationRecord>();
  ConversationRecord record{read_summary(rows, 0), nlohmann::json::parse(rows.text(0, 6), nullptr, false)};
  if (record.turns.is_discarded()) {
    return make_error(ErrorCode::corrupt, "conversation '" + id + "': its turns are not JSON");
  }
  return std::optional(std::move(record));
}

Result<std::vector<ConversationSummary>> SharedConversations::list(const std::string& tenant,
                                                                   const std::string& collection, std::size_t limit) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->query(sql::kList, store::PgParams().add(tenant).add(collection).add(int64(limit))));
  std::vector<ConversationSummary> out;
  for (std::size_t i = 0; i < rows.rows(); ++i) out.push_back(read_summary(rows, i));
  return out;
}

Result<std::optional<ConversationSummary>> SharedConversations::rename(const std::string& tenant, const std::string& id,
                                                                       const std::string& title, double at) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->query(sql::kRename, store::PgParams().add(title).add_float64(at).add(id).add(tenant)));
  if (rows.rows() == 0) return std::optional<ConversationSummary>();
  return std::optional(read_summary(rows, 0));
}

Result<bool> SharedConversations::remove(const std::string& tenant, const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(sql::kRemove, store::PgParams().add(id).add(tenant)));
  return rows.rows() > 0;
}

Result<void> SharedConversations::remove_collection(const std::string& tenant, const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(sql::kRemoveCollection, store::PgParams().add(tenant).add(collection)));
  return {};
}

}  // namespace kotae::server
