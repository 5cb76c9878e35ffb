#include "store/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kotae::store {

Error system_error(int error_number, const std::filesystem::path& path, std::string_view doing) {
  if (error_number == ENOSPC || error_number == EFBIG) {
    return make_error(ErrorCode::io,
                      "disk full or file too large while trying to " + std::string(doing) + " " + path.string());
  }
  return make_error(ErrorCode::io,
                    "cannot " + std::string(doing) + " " + path.string() + ": " + std::strerror(error_number));
}

Result<void> sync_folder(const std::filesystem::path& folder) {
  const std::filesystem::path target = folder.empty() ? std::filesystem::path(".") : folder;
  const int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return system_error(errno, target, "open the folder");
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  ::close(fd);
  if (!synced) return system_error(sync_errno, target, "sync the folder");
  return {};
}

Result<void> write_file_synced(const std::filesystem::path& path, std::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return system_error(errno, path, "create");
  auto fail = [&](int error_number, std::string_view doing) {
    ::close(fd);
    ::unlink(path.c_str());
    return system_error(error_number, path, doing);
  };
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t written = ::write(fd, contents.data() + done, contents.size() - done);
    if (written < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "write");
    }
    done += static_cast<std::size_t>(written);
  }
  if (::fsync(fd) != 0) return fail(errno, "sync");
  if (::close(fd) != 0) {
    ::unlink(path.c_str());
    return system_error(errno, path, "close");
  }
  return {};
}

Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  std::filesystem::path temporary = path;
  temporary += ".tmp-" + std::to_string(::getpid());
  if (auto written = write_file_synced(temporary, contents); !written) return written;
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(temporary.c_str());
    return system_error(rename_errno, path, "rename onto");
  }
  return sync_folder(path.parent_path());
}

}  // namespace kotae::store
