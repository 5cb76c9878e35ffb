#include "store/reader_pool.h"

namespace kotae::store {

ReaderPool::Lease::~Lease() {
  if (db_ != nullptr) pool_->give_back(std::move(db_));
}

Result<ReaderPool::Lease> ReaderPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<Database> db = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  auto opened = Database::open(path_, Database::Mode::read_write, /*query_only=*/true);
  if (!opened) return opened.error();
  return Lease(this, std::move(*opened));
}

void ReaderPool::give_back(std::unique_ptr<Database> db) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(db));
}

}  // namespace kotae::store
