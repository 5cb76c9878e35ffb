#pragma once
// The latency figures every C++ benchmark prints (CONVENTIONS.md, bench/README.md "Latency figures"):
// percentiles by the one definition (core/percentile.h), under the field names p50_ms, p95_ms, p99_ms.

#include <vector>

#include <nlohmann/json.hpp>

#include "core/percentile.h"

namespace kotae::bench {

using kotae::percentile;

// `base` with p50_ms, p95_ms, p99_ms and runs of `ms`.
inline nlohmann::json latency(nlohmann::json base, const std::vector<double>& ms) {
  base["p50_ms"] = percentile(ms, 50);
  base["p95_ms"] = percentile(ms, 95);
  base["p99_ms"] = percentile(ms, 99);
  base["runs"] = ms.size();
  return base;
}

}  // namespace kotae::bench
