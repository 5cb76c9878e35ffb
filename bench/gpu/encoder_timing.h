#pragma once
// The GPU benches' timing loop: run batches for `seconds`, each call timed alone, and report
// per-call percentiles and texts per second over the whole run (preparation included).
#include <chrono>
#include <cstddef>
#include <vector>

#include "core/percentile.h"  // not latency_stats.h: nvcc builds these benches without nlohmann/json

struct EncoderTiming {
  std::size_t calls = 0;
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, texts_per_s = 0;
};

// prepare(done) readies the next `batch` texts (untimed); run() encodes them (timed).
template <class Prepare, class Run>
EncoderTiming time_encoder(double seconds, int batch, Prepare prepare, Run run) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms;
  std::size_t done = 0;
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    prepare(done);
    const auto t0 = Clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    done += batch;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  using kotae::percentile;
  return {ms.size(), percentile(ms, 50), percentile(ms, 95), percentile(ms, 99), done / elapsed};
}
