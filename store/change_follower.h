#pragma once
// Keeps a server in step with what other processes commit to its store: a thread that calls
// `on_change` as soon as it hears of a commit, and at least every `period` whatever it heard. Over
// PostgreSQL it LISTENs on the store's change channel (store/postgres_change_follower.h): the other
// replicas' writes to collections and API keys. Over SQLite it watches FOLDER/server.db
// (store/sqlite_change_follower.h): a key added by `kotae keygen --store FOLDER`, while the periodic
// call lets the collections catch up with `kotae index` and the like.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "core/result.h"

namespace kotae::store {

class Catalog;

class ChangeFollower {
 public:
  virtual ~ChangeFollower() = default;
  ChangeFollower() = default;
  ChangeFollower(const ChangeFollower&) = delete;
  ChangeFollower& operator=(const ChangeFollower&) = delete;

  // Commits heard since start (for tests and metrics).
  virtual std::uint64_t notifications() const = 0;
};

// The follower for the catalog's back-end; `folder` holds the SQLite back-end's server.db.
Result<std::unique_ptr<ChangeFollower>> follow_changes(const Catalog& catalog, const std::filesystem::path& folder,
                                                       std::chrono::milliseconds period,
                                                       std::function<void()> on_change);

}  // namespace kotae::store
