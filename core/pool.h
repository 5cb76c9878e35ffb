#pragma once
// Connections (or anything costly to open) shared by many threads: a caller borrows one for a call and
// its Lease gives it back when it ends. One that `reusable` refuses, when lent or given back, is
// dropped, so after a server restarts the next borrower simply opens a fresh one. With a limit, a
// borrower waits up to its deadline for one to come back, then is told the pool is `overloaded`.
// The PostgreSQL pool, SQLite's readers and the Redis work queues are this one template.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace kotae {

template <typename T>
class Pool {
 public:
  using Open = std::function<Result<std::unique_ptr<T>>()>;
  using Reusable = std::function<bool(T&)>;

  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<T> item) : pool_(pool), item_(std::move(item)) {}
    ~Lease() {
      if (pool_ != nullptr && item_ != nullptr) pool_->give_back(std::move(item_));
    }
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    T& operator*() const { return *item_; }
    T* operator->() const { return item_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<T> item_;
  };

  // `limit` 0: no limit (every concurrent borrower gets one); `what` names the items in the overload error.
  explicit Pool(Open open, std::size_t limit = 0, Reusable reusable = {}, std::string what = "connections")
      : open_(std::move(open)), limit_(limit), reusable_(std::move(reusable)), what_(std::move(what)) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  Result<Lease> acquire(std::chrono::milliseconds wait = std::chrono::seconds(30)) {
    std::unique_lock lock(mutex_);
    if (limit_ > 0 && !returned_.wait_for(lock, wait, [&] { return !idle_.empty() || lent_ < limit_; })) {
      return make_error(ErrorCode::overloaded, "all " + std::to_string(limit_) + " " + what_ + " are busy");
    }
    while (!idle_.empty()) {
      std::unique_ptr<T> item = std::move(idle_.back());
      idle_.pop_back();
      if (!reusable_ || reusable_(*item)) {
        ++lent_;
        return Lease(this, std::move(item));
      }
    }
    ++lent_;  // a slot for the one opened below, outside the lock
    lock.unlock();
    auto opened = open_();
    if (!opened) {
      std::lock_guard relock(mutex_);
      --lent_;
      returned_.notify_one();
      return opened.error();
    }
    return Lease(this, std::move(*opened));
  }

 private:
  void give_back(std::unique_ptr<T> item) {
    const bool keep = !reusable_ || reusable_(*item);
    std::lock_guard lock(mutex_);
    --lent_;
    if (keep) idle_.push_back(std::move(item));
    returned_.notify_one();
  }

  Open open_;
  std::size_t limit_;
  Reusable reusable_;
  std::string what_;
  std::mutex mutex_;
  std::condition_variable returned_;
  std::size_t lent_ = 0;
  std::vector<std::unique_ptr<T>> idle_;
};

}  // namespace kotae
