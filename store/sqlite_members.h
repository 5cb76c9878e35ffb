#pragma once
// Collections' members in the SQLite back-end's own file (FOLDER/server.db, table
// `collection_members`, store/member_store.h). One connection, one call at a time.

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/member_store.h"
#include "store/schema_steps.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Its tables (store/sqlite_schema.h).
const SchemaSteps& sqlite_members_schema();

class SqliteMembers final : public MemberStore {
 public:
  static Result<std::unique_ptr<SqliteMembers>> open(const std::filesystem::path& folder);

  Result<std::vector<CollectionMember>> members(const std::string& tenant, const std::string& collection) override;
  Result<std::map<std::string, std::vector<CollectionMember>>> all(const std::string& tenant) override;
  Result<void> put(const std::string& tenant, const std::string& collection, const CollectionMember& member) override;
  Result<bool> remove(const std::string& tenant, const std::string& collection, const std::string& kind,
                      const std::string& subject) override;
  Result<void> remove_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> copy_collection(const std::string& tenant, const std::string& from, const std::string& to) override;

 private:
  explicit SqliteMembers(std::unique_ptr<Database> db) : db_(std::move(db)) {}

  std::mutex mutex_;  // guards the connection
  std::unique_ptr<Database> db_;
};

}  // namespace kotae::store
