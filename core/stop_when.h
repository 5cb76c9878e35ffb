#pragma once
// When long work (a file loaded page by page, its chunks embedded batch by batch) should end early:
// its job was cancelled, or it ran past its time budget. The work asks between its steps; a step
// already begun finishes, so what it commits is whole.

#include <atomic>
#include <chrono>

#include "core/result.h"

namespace kotae {

class StopWhen {
 public:
  StopWhen() = default;  // never
  // `cancelled` (borrowed, may be null) is watched; `budget_s` counts from now (0: no budget).
  StopWhen(const std::atomic<bool>* cancelled, double budget_s);

  // ErrorCode::stopped saying why, once the work should end.
  Result<void> check() const;

 private:
  const std::atomic<bool>* cancelled_ = nullptr;
  double budget_s_ = 0;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace kotae
