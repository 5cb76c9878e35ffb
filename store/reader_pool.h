#pragma once
// Read-only SQLite connections for searches and lookups, one per concurrent reader: a SQLite
// connection must not be used by two threads at once, and WAL lets readers run beside the writer.
// A reader borrows a connection for one call and gives it back; the pool grows to the number of
// threads that read at the same time.

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "core/result.h"
#include "store/sqlite_database.h"

namespace kotae::store {

class ReaderPool {
 public:
  // Gives its connection back to the pool when destroyed.
  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Database> db) : pool_(pool), db_(std::move(db)) {}
    ~Lease();
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    Database& operator*() const { return *db_; }
    Database* operator->() const { return db_.get(); }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Database> db_;
  };

  explicit ReaderPool(std::filesystem::path path) : path_(std::move(path)) {}

  Result<Lease> acquire();

 private:
  void give_back(std::unique_ptr<Database> db);

  std::filesystem::path path_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Database>> idle_;
};

}  // namespace kotae::store
