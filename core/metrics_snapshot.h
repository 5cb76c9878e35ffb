#pragma once
// Figures read when Prometheus scrapes (a queue's depths, a worker's counters, the process, the GPUs),
// written in its text format by prometheus-cpp, the one writer of /metrics everywhere
// (server/server_metrics.h keeps the histograms and counters the server updates itself). Each call adds
// one series; the series of a metric are written together, whatever order they were added in.

#include <map>
#include <memory>
#include <string>

namespace kotae {

class MetricsSnapshot {
 public:
  using Labels = std::map<std::string, std::string>;

  MetricsSnapshot();
  ~MetricsSnapshot();
  MetricsSnapshot(const MetricsSnapshot&) = delete;
  MetricsSnapshot& operator=(const MetricsSnapshot&) = delete;

  void gauge(const std::string& name, const std::string& help, double value, const Labels& labels = {});
  // A counter's value so far (never negative).
  void counter(const std::string& name, const std::string& help, double value, const Labels& labels = {});
  // Prometheus' text format (version 0.0.4); empty when nothing was added.
  std::string text() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kotae
