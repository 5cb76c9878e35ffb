#pragma once
// Per-key token buckets: a key with rate r and burst b may make b requests at once, then r per second.

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace kotae::server {

class RateLimiter {
 public:
  // Takes one token from `key`'s bucket; nullopt when allowed, else the seconds until a token is there.
  std::optional<double> take(const std::string& key, double rate_per_second, double burst);

 private:
  using Clock = std::chrono::steady_clock;
  struct Bucket {
    double tokens;
    Clock::time_point updated;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace kotae::server
