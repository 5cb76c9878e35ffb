#pragma once
// One writer per collection across processes: an exclusive lock (flock) on DIR/writer.lock, held for
// a whole write (a CLI index run, a server's ingestion job). SQLite already serialises commits; this
// makes a second writer wait, or fail saying who holds the collection, instead of interleaving its
// files with another's. The holder writes its pid and what it is doing into the file for that
// message. The lock ends with the process, so a crash never leaves it held.

#include <chrono>
#include <filesystem>
#include <string>

#include "core/result.h"
#include "core/stop_when.h"

namespace kotae::store {

class WriterLock {
 public:
  // Waits up to `wait` (polling, so that `stop` can end the wait too). Another holder after `wait`:
  // ErrorCode::overloaded naming it; `stop` said stop: its error.
  static Result<WriterLock> acquire(const std::filesystem::path& dir, std::string_view doing,
                                    std::chrono::milliseconds wait, const StopWhen& stop = {});
  // Who holds the lock of `dir` now ("pid 123, kotae index"), or "" when nobody does.
  static std::string holder(const std::filesystem::path& dir);

  WriterLock(WriterLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kotae::store
