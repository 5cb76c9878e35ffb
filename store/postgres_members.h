#pragma once
// Over a shared store, collections' members in PostgreSQL (table `collection_members`), so every
// replica decides access alike (store/member_store.h).

#include <memory>

#include "store/member_store.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_members_schema();

class PostgresMembers final : public MemberStore {
 public:
  explicit PostgresMembers(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  Result<std::vector<CollectionMember>> members(const std::string& tenant, const std::string& collection) override;
  Result<std::map<std::string, std::vector<CollectionMember>>> all(const std::string& tenant) override;
  Result<void> put(const std::string& tenant, const std::string& collection, const CollectionMember& member) override;
  Result<bool> remove(const std::string& tenant, const std::string& collection, const std::string& kind,
                      const std::string& subject) override;
  Result<void> remove_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> copy_collection(const std::string& tenant, const std::string& from, const std::string& to) override;

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
