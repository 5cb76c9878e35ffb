#include "platform/openmp_limit.h"

#include <unistd.h>

#include <cstdlib>

namespace kotae::platform {

void restart_with_one_openmp_thread(char** argv) {
  if (std::getenv("OMP_THREAD_LIMIT") != nullptr) return;
  if (::setenv("OMP_THREAD_LIMIT", "1", 0) != 0) return;
  ::execv("/proc/self/exe", argv);  // returns only on failure: go on without the limit
}

}  // namespace kotae::platform
