#include "store/sqlite_conversations.h"

#include "store/conversation_sql.h"
#include "store/sqlite_schema.h"

namespace kotae::store {
namespace {

namespace sql = conversation_sql;

// 0.1 kept the conversations in FOLDER/conversations.db: its rows are copied into server.db once, and
// the old file renamed aside (conversations.db.imported) for the operator to delete.
Result<void> import_0_1_file(Database& db, const std::filesystem::path& folder) {
  const std::filesystem::path old = folder / "conversations.db";
  std::error_code ec;
  if (!std::filesystem::exists(old, ec)) return {};
  auto attach = KOTAE_TRY_VALUE(db.prepare("ATTACH DATABASE ?1 AS old"));
  KOTAE_TRY(attach.bind_text(1, old.string()).run());
  auto copied = db.execute(
      "INSERT OR IGNORE INTO main.conversations(id, tenant, collection, title, created_at, updated_at, turn_count, "
      "turns) SELECT id, tenant, collection, title, created_at, updated_at, turn_count, turns FROM old.conversations");
  KOTAE_TRY(db.execute("DETACH DATABASE old"));
  if (!copied) return copied.error();
  for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(old.string() + suffix, ec);
  std::filesystem::rename(old, old.string() + ".imported", ec);
  if (ec && std::filesystem::exists(old)) {
    return make_error(ErrorCode::io, "cannot move " + old.string() + " aside after importing it: " + ec.message());
  }
  return {};
}

ConversationSummary read_summary(const Statement& row) {
  return {std::string(row.column_text(0)),
          std::string(row.column_text(1)),
          std::string(row.column_text(2)),
          row.column_double(3),
          row.column_double(4),
          static_cast<std::size_t>(row.column_int64(5))};
}

// Runs a statement with RETURNING to its end (its change commits there): whether it returned a row.
Result<bool> changed(Statement& statement) {
  const bool row = KOTAE_TRY_VALUE(statement.step());
  KOTAE_TRY(statement.run());
  return row;
}

}  // namespace

const SchemaSteps& sqlite_conversations_schema() {
  // Version 1: 0.1's table, which lived in a file of its own (conversations.db) until 0.2.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS conversations(
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  collection TEXT NOT NULL,
  title TEXT NOT NULL,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  turn_count INTEGER NOT NULL,
  turns TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS conversations_by_tenant ON conversations(tenant, updated_at);
)sql";
  // Version 2: each conversation's owner, a person or key ('': the whole tenant's, as before).
  static constexpr const char* kVersion2 = R"sql(
ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql";
  static constexpr const char* kSteps[] = {kVersion1, kVersion2};
  static const SchemaSteps schema{"conversations", kSteps};
  return schema;
}

Result<std::unique_ptr<SqliteConversations>> SqliteConversations::open(const std::filesystem::path& folder,
                                                                       std::size_t per_tenant) {
  auto db = KOTAE_TRY_VALUE(open_server_database(folder, sqlite_conversations_schema()));
  KOTAE_TRY(import_0_1_file(*db, folder));
  return std::unique_ptr<SqliteConversations>(new SqliteConversations(std::move(db), per_tenant));
}

Result<void> SqliteConversations::create(const ConversationOwner& owner, const ConversationRecord& record) {
  const auto& s = record.summary;
  std::lock_guard lock(mutex_);
  auto insert = KOTAE_TRY_VALUE(db_->prepare(sql::kInsert));
  insert.bind_text(1, s.id).bind_text(2, owner.tenant).bind_text(3, s.collection).bind_text(4, s.title);
  insert.bind(5, s.created_at).bind(6, s.updated_at).bind(7, sql::int64(s.turns)).bind_text(8, record.turns.dump());
  KOTAE_TRY(insert.bind_text(9, owner.person).run());
  auto trim = KOTAE_TRY_VALUE(db_->prepare(sql::kTrim));
  return trim.bind_text(1, owner.tenant).bind(2, sql::int64(per_tenant_)).run();
}

Result<bool> SqliteConversations::update_turns(const ConversationOwner& owner, const ConversationRecord& record,
                                               std::size_t turns_before) {
  const auto& s = record.summary;
  std::lock_guard lock(mutex_);
  auto update = KOTAE_TRY_VALUE(db_->prepare(sql::kUpdateTurns));
  update.bind_text(1, record.turns.dump()).bind(2, sql::int64(s.turns)).bind(3, s.updated_at);
  update.bind_text(4, s.id).bind_text(5, owner.tenant).bind(6, sql::int64(turns_before)).bind_text(7, owner.person);
  return changed(update);
}

Result<std::optional<ConversationRecord>> SqliteConversations::get(const ConversationOwner& owner,
                                                                   const std::string& id) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(sql::kGet));
  select.bind_text(1, id).bind_text(2, owner.tenant).bind_text(3, owner.person);
  if (!KOTAE_TRY_VALUE(select.step())) return std::optional<ConversationRecord>();
  ConversationRecord record{read_summary(select), nlohmann::json::parse(select.column_text(6), nullptr, false)};
  if (record.turns.is_discarded()) {
    return make_error(ErrorCode::corrupt, "conversation '" + id + "': its turns are not JSON");
  }
  return std::optional(std::move(record));
}

Result<std::vector<ConversationSummary>> SqliteConversations::list(const ConversationOwner& owner,
                                                                   const std::string& collection, std::size_t limit) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(sql::kList));
  select.bind_text(1, owner.tenant).bind_text(2, collection).bind_text(3, owner.person).bind(4, sql::int64(limit));
  std::vector<ConversationSummary> out;
  while (KOTAE_TRY_VALUE(select.step())) out.push_back(read_summary(select));
  return out;
}

Result<std::optional<ConversationSummary>> SqliteConversations::rename(const ConversationOwner& owner,
                                                                       const std::string& id, const std::string& title,
                                                                       double at) {
  std::lock_guard lock(mutex_);
  auto update = KOTAE_TRY_VALUE(db_->prepare(sql::kRename));
  update.bind_text(1, title).bind(2, at).bind_text(3, id).bind_text(4, owner.tenant).bind_text(5, owner.person);
  if (!KOTAE_TRY_VALUE(update.step())) return std::optional<ConversationSummary>();
  auto summary = read_summary(update);
  KOTAE_TRY(update.run());
  return std::optional(std::move(summary));
}

Result<bool> SqliteConversations::remove(const ConversationOwner& owner, const std::string& id) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare(sql::kRemove));
  remove.bind_text(1, id).bind_text(2, owner.tenant).bind_text(3, owner.person);
  return changed(remove);
}

Result<void> SqliteConversations::remove_collection(const std::string& tenant, const std::string& collection) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare(sql::kRemoveCollection));
  return remove.bind_text(1, tenant).bind_text(2, collection).run();
}

Result<void> SqliteConversations::rename_collection(const std::string& tenant, const std::string& from,
                                                    const std::string& to) {
  std::lock_guard lock(mutex_);
  auto rename = KOTAE_TRY_VALUE(db_->prepare(sql::kRenameCollection));
  return rename.bind_text(1, to).bind_text(2, tenant).bind_text(3, from).run();
}

}  // namespace kotae::store
