#include "core/remove_tree.h"

#include <chrono>
#include <thread>

namespace kotae {

Result<void> remove_tree(const std::filesystem::path& dir) {
  std::error_code ec;
  for (int attempt = 0; attempt < 10; ++attempt) {
    ec.clear();
    std::filesystem::remove_all(dir, ec);
    if (!ec) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return make_error(ErrorCode::io, "cannot delete " + dir.string() + ": " + ec.message());
}

}  // namespace kotae
