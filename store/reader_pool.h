#pragma once
// Read-only SQLite connections for searches and lookups, one per concurrent reader: a SQLite
// connection must not be used by two threads at once, and WAL lets readers run beside the writer.
// A reader borrows a connection for one call and gives it back; the pool grows to the number of
// threads that read at the same time.

#include <filesystem>

#include "core/pool.h"
#include "store/sqlite_database.h"

namespace kotae::store {

class ReaderPool : public Pool<Database> {
 public:
  explicit ReaderPool(const std::filesystem::path& path)
      : Pool([path] { return Database::open(path, Database::Mode::read_write, /*query_only=*/true); }) {}
};

}  // namespace kotae::store
