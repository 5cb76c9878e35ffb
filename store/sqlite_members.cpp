#include "store/sqlite_members.h"

#include "store/member_sql.h"
#include "store/sqlite_schema.h"

namespace kotae::store {

const SchemaSteps& sqlite_members_schema() {
  // Version 1: one row a member of a collection.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE collection_members(
  tenant TEXT NOT NULL,
  collection TEXT NOT NULL,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  role TEXT NOT NULL,
  added_at REAL NOT NULL,
  added_by TEXT NOT NULL,
  PRIMARY KEY (tenant, collection, kind, subject));
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"members", kSteps};
  return schema;
}

Result<std::unique_ptr<SqliteMembers>> SqliteMembers::open(const std::filesystem::path& folder) {
  auto db = KOTAE_TRY_VALUE(open_server_database(folder, sqlite_members_schema()));
  return std::unique_ptr<SqliteMembers>(new SqliteMembers(std::move(db)));
}

Result<std::vector<CollectionMember>> SqliteMembers::members(const std::string& tenant, const std::string& collection) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(member_sql::kMembers));
  select.bind_text(1, tenant).bind_text(2, collection);
  std::vector<CollectionMember> out;
  while (KOTAE_TRY_VALUE(select.step())) {
    out.push_back({std::string(select.column_text(0)), std::string(select.column_text(1)),
                   std::string(select.column_text(2)), select.column_double(3), std::string(select.column_text(4))});
  }
  return out;
}

Result<std::map<std::string, std::vector<CollectionMember>>> SqliteMembers::all(const std::string& tenant) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(member_sql::kAll));
  select.bind_text(1, tenant);
  std::map<std::string, std::vector<CollectionMember>> out;
  while (KOTAE_TRY_VALUE(select.step())) {
    out[std::string(select.column_text(0))].push_back(
        {std::string(select.column_text(1)), std::string(select.column_text(2)), std::string(select.column_text(3)),
         select.column_double(4), std::string(select.column_text(5))});
  }
  return out;
}

Result<void> SqliteMembers::put(const std::string& tenant, const std::string& collection, const CollectionMember& m) {
  std::lock_guard lock(mutex_);
  auto upsert = KOTAE_TRY_VALUE(db_->prepare(member_sql::kPut));
  return upsert.bind_text(1, tenant)
      .bind_text(2, collection)
      .bind_text(3, m.kind)
      .bind_text(4, m.subject)
      .bind_text(5, m.role)
      .bind(6, m.added_at)
      .bind_text(7, m.added_by)
      .run();
}

Result<bool> SqliteMembers::remove(const std::string& tenant, const std::string& collection, const std::string& kind,
                                   const std::string& subject) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare(member_sql::kRemove));
  remove.bind_text(1, tenant).bind_text(2, collection).bind_text(3, kind).bind_text(4, subject);
  const bool removed = KOTAE_TRY_VALUE(remove.step());
  KOTAE_TRY(remove.run());
  return removed;
}

Result<void> SqliteMembers::remove_collection(const std::string& tenant, const std::string& collection) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare(member_sql::kRemoveCollection));
  return remove.bind_text(1, tenant).bind_text(2, collection).run();
}

Result<void> SqliteMembers::copy_collection(const std::string& tenant, const std::string& from, const std::string& to) {
  std::lock_guard lock(mutex_);
  auto transaction = KOTAE_TRY_VALUE(Transaction::begin(*db_));
  auto clear = KOTAE_TRY_VALUE(db_->prepare(member_sql::kRemoveCollection));
  KOTAE_TRY(clear.bind_text(1, tenant).bind_text(2, to).run());
  auto copy = KOTAE_TRY_VALUE(db_->prepare(member_sql::kCopyCollection));
  KOTAE_TRY(copy.bind_text(1, to).bind_text(2, tenant).bind_text(3, from).run());
  return transaction.commit();
}

}  // namespace kotae::store
