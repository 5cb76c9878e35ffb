#include "queue/queue_metrics.h"

#include <functional>

#include "core/metrics_snapshot.h"

namespace kotae::queue {

std::string queue_metrics_text(const std::vector<NamedQueueStats>& queues) {
  MetricsSnapshot metrics;
  auto gauge = [&](const char* name, const char* help, const std::function<double(const StreamStats&)>& value) {
    for (const auto& q : queues) {
      for (const auto& s : q.stats.streams)
        metrics.gauge(name, help, value(s), {{"queue", q.queue}, {"stream", s.stream}});
    }
  };
  gauge("kotae_queue_waiting", "Entries no worker has taken yet.",
        [](const StreamStats& s) { return double(s.waiting); });
  gauge("kotae_queue_pending", "Entries taken by a worker and not acknowledged.",
        [](const StreamStats& s) { return double(s.pending); });
  gauge("kotae_queue_retrying", "Pending entries delivered more than once.",
        [](const StreamStats& s) { return double(s.retrying); });
  gauge("kotae_queue_oldest_age_seconds", "Age of the oldest entry still in the stream.",
        [](const StreamStats& s) { return s.oldest_age_s; });
  for (const auto& q : queues) {
    metrics.gauge("kotae_queue_dead_letters", "Entries given up after their attempts, in the dead-letter stream.",
                  double(q.stats.dead_letters), {{"queue", q.queue}});
  }
  return metrics.text();
}

}  // namespace kotae::queue
