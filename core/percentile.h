#pragma once
// The one percentile definition of every latency figure (bench/README.md, "Latency figures"): linear
// interpolation between the closest ranks, rank = p / 100 * (n - 1) over the sorted values (numpy's
// default method). Benchmarks and `kotae eval` use it. No dependencies and C++17, so that the GPU
// benches (nvcc, no nlohmann/json there) use it too; bench/latency_stats.h adds the JSON fields,
// bench/latency_stats.py is the Python twin.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kotae {

// The p-th percentile (0 <= p <= 100) of `values`, in any order; 0 when there are none.
inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace kotae
