#include "store/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <thread>
#include <utility>

#include "store/atomic_file.h"

namespace kotae::store {
namespace {

constexpr const char* kLockFile = "writer.lock";
constexpr auto kPoll = std::chrono::milliseconds(50);

}  // namespace

Result<WriterLock> WriterLock::acquire(const std::filesystem::path& dir, std::string_view doing,
                                       std::chrono::milliseconds wait, const StopWhen& stop) {
  const std::filesystem::path path = dir / kLockFile;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return system_error(errno, path, "open the writer lock");
  WriterLock lock(fd);
  const auto give_up = std::chrono::steady_clock::now() + wait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return system_error(errno, path, "lock");
    if (auto go_on = stop.check(); !go_on) return go_on.error();
    if (std::chrono::steady_clock::now() >= give_up) {
      const std::string who = holder(dir);
      return make_error(ErrorCode::overloaded, "collection " + dir.string() + " is being written by another process (" +
                                                   (who.empty() ? std::string("unknown") : who) + "); waited " +
                                                   std::to_string(wait.count() / 1000) +
                                                   " s: try again when it has finished");
    }
    std::this_thread::sleep_for(kPoll);
  }
  const std::string note = "pid " + std::to_string(::getpid()) + ", " + std::string(doing) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, note.data(), note.size(), 0);  // for messages only
  return lock;
}

std::string WriterLock::holder(const std::filesystem::path& dir) {
  std::ifstream in(dir / kLockFile);
  std::string who{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  while (!who.empty() && (who.back() == '\n' || who.back() == '\r')) who.pop_back();
  return who.size() > 200 ? who.substr(0, 200) : who;
}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace kotae::store
