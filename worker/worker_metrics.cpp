#include "worker/worker_metrics.h"

#include "core/metrics_snapshot.h"

namespace kotae::worker {

std::string ingest_metrics_text(const IngestWorker& worker) {
  const WorkerCounters& c = worker.counters();
  MetricsSnapshot metrics;
  for (const auto& [outcome, value] :
       {std::pair{"indexed", &c.indexed}, {"unchanged", &c.unchanged}, {"failed", &c.failed}}) {
    metrics.counter("kotae_worker_files_total", "Files this worker finished, by outcome.", double(value->load()),
                    {{"outcome", outcome}});
  }
  metrics.counter("kotae_worker_retries_total", "Attempts that failed and wait for another.", double(c.retried.load()));
  metrics.counter("kotae_worker_dead_letters_total", "Entries this worker gave up and sent to the dead-letter stream.",
                  double(c.dead_lettered.load()));
  metrics.counter("kotae_worker_chunks_total", "Chunks this worker stored.", double(c.chunks.load()));
  metrics.gauge("kotae_worker_busy", "Files being indexed now.", double(worker.busy()));
  return metrics.text();
}

}  // namespace kotae::worker
