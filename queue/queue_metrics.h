#pragma once
// A work queue's figures in Prometheus' text format, per stream: what the API's and the workers'
// /metrics add, and what autoscalers (KEDA, an HPA through prometheus-adapter) scale the workers on.

#include <string>
#include <vector>

#include "queue/work_queue.h"

namespace kotae::queue {

struct NamedQueueStats {
  std::string queue;  // its name ("kotae:ingest")
  QueueStats stats;
};

// kotae_queue_{waiting,pending,retrying,oldest_age_seconds}{queue,stream} and kotae_queue_dead_letters{queue},
// each metric once with the series of every queue (the text format wants a metric's lines together).
std::string queue_metrics_text(const std::vector<NamedQueueStats>& queues);

}  // namespace kotae::queue
