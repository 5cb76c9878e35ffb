#include "core/stop_when.h"

#include <cstdio>
#include <string>

namespace kotae {

StopWhen::StopWhen(const std::atomic<bool>* cancelled, double budget_s) : cancelled_(cancelled), budget_s_(budget_s) {
  if (budget_s > 0) {
    deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                       std::chrono::duration<double>(budget_s));
  }
}

Result<void> StopWhen::check() const {
  if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) {
    return make_error(ErrorCode::stopped, "cancelled");
  }
  if (budget_s_ > 0 && std::chrono::steady_clock::now() > deadline_) {
    char budget[32];
    std::snprintf(budget, sizeof budget, "%g", budget_s_);
    return make_error(ErrorCode::stopped,
                      std::string("stopped: it took longer than its time budget of ") + budget + " s");
  }
  return {};
}

}  // namespace kotae
