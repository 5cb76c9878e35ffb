#include "core/metrics_snapshot.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace kotae {

struct MetricsSnapshot::State {
  prometheus::Registry registry;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counters;
};

MetricsSnapshot::MetricsSnapshot() : state_(std::make_unique<State>()) {}
MetricsSnapshot::~MetricsSnapshot() = default;

void MetricsSnapshot::gauge(const std::string& name, const std::string& help, double value, const Labels& labels) {
  auto& family = state_->gauges[name];
  if (!family) family = &prometheus::BuildGauge().Name(name).Help(help).Register(state_->registry);
  family->Add(labels).Set(value);
}

void MetricsSnapshot::counter(const std::string& name, const std::string& help, double value, const Labels& labels) {
  auto& family = state_->counters[name];
  if (!family) family = &prometheus::BuildCounter().Name(name).Help(help).Register(state_->registry);
  if (value > 0)
    family->Add(labels).Increment(value);
  else
    family->Add(labels);
}

std::string MetricsSnapshot::text() const {
  return prometheus::TextSerializer().Serialize(state_->registry.Collect());
}

}  // namespace kotae
