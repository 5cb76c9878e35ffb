#include "server/rate_limiter.h"

#include <algorithm>

namespace kotae::server {

std::optional<double> RateLimiter::take(const std::string& key, double rate, double burst) {
  if (rate <= 0) return std::nullopt;
  const auto now = Clock::now();
  std::lock_guard lock(mutex_);
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst, now});
  auto& b = it->second;
  b.tokens = std::min(burst, b.tokens + rate * std::chrono::duration<double>(now - b.updated).count());
  b.updated = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return std::nullopt;
  }
  return (1 - b.tokens) / rate;
}

}  // namespace kotae::server
