#include "store/postgres_members.h"

#include "store/member_sql.h"

namespace kotae::store {

const SchemaSteps& postgres_members_schema() {
  // Version 1: one row a member of a collection.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS collection_members(
  tenant text NOT NULL,
  collection text NOT NULL,
  kind text NOT NULL,
  subject text NOT NULL,
  role text NOT NULL,
  added_at double precision NOT NULL,
  added_by text NOT NULL,
  PRIMARY KEY (tenant, collection, kind, subject));
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"members", kSteps};
  return schema;
}

Result<std::vector<CollectionMember>> PostgresMembers::members(const std::string& tenant,
                                                               const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(member_sql::kMembers, PgParams().add(tenant).add(collection)));
  std::vector<CollectionMember> out;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    out.push_back({std::string(rows.text(i, 0)), std::string(rows.text(i, 1)), std::string(rows.text(i, 2)),
                   rows.float64(i, 3), std::string(rows.text(i, 4))});
  }
  return out;
}

Result<std::map<std::string, std::vector<CollectionMember>>> PostgresMembers::all(const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(member_sql::kAll, PgParams().add(tenant)));
  std::map<std::string, std::vector<CollectionMember>> out;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    out[std::string(rows.text(i, 0))].push_back({std::string(rows.text(i, 1)), std::string(rows.text(i, 2)),
                                                 std::string(rows.text(i, 3)), rows.float64(i, 4),
                                                 std::string(rows.text(i, 5))});
  }
  return out;
}

Result<void> PostgresMembers::put(const std::string& tenant, const std::string& collection, const CollectionMember& m) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(member_sql::kPut, PgParams()
                                                  .add(tenant)
                                                  .add(collection)
                                                  .add(m.kind)
                                                  .add(m.subject)
                                                  .add(m.role)
                                                  .add_float64(m.added_at)
                                                  .add(m.added_by)));
  return {};
}

Result<bool> PostgresMembers::remove(const std::string& tenant, const std::string& collection, const std::string& kind,
                                     const std::string& subject) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->prepared(member_sql::kRemove, PgParams().add(tenant).add(collection).add(kind).add(subject)));
  return rows.rows() > 0;
}

Result<void> PostgresMembers::remove_collection(const std::string& tenant, const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(member_sql::kRemoveCollection, PgParams().add(tenant).add(collection)));
  return {};
}

Result<void> PostgresMembers::copy_collection(const std::string& tenant, const std::string& from,
                                              const std::string& to) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(*lease));
  KOTAE_TRY(lease->prepared(member_sql::kRemoveCollection, PgParams().add(tenant).add(to)));
  KOTAE_TRY(lease->prepared(member_sql::kCopyCollection, PgParams().add(to).add(tenant).add(from)));
  return transaction.commit();
}

}  // namespace kotae::store
