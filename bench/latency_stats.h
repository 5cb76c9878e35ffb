#pragma once
// One definition of the latency figures every C++ benchmark prints (CONVENTIONS.md): percentiles by
// linear interpolation between ranks, under the field names p50_ms, p95_ms, p99_ms.

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

namespace kotae::bench {

inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

// `base` with p50_ms, p95_ms, p99_ms and runs of `ms`.
inline nlohmann::json latency(nlohmann::json base, const std::vector<double>& ms) {
  base["p50_ms"] = percentile(ms, 50);
  base["p95_ms"] = percentile(ms, 95);
  base["p99_ms"] = percentile(ms, 99);
  base["runs"] = ms.size();
  return base;
}

}  // namespace kotae::bench
