#include "server/server_metrics.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <tuple>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "server/gpu_metrics.h"
#include "server/process_metrics.h"

namespace kotae::server {
namespace {

using prometheus::Histogram;

Histogram::BucketBoundaries latency_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

class BatchMetrics final : public batch::BatchObserver {
 public:
  BatchMetrics(Histogram& sizes, prometheus::Gauge& depth, prometheus::Counter& rejected)
      : sizes_(sizes), depth_(depth), rejected_(rejected) {}
  void on_batch(const batch::BatchRecord& record) override {
    sizes_.Observe(static_cast<double>(record.items));
    depth_.Set(static_cast<double>(record.queue_depth));
  }
  void on_rejected(std::size_t depth) override {
    rejected_.Increment();
    depth_.Set(static_cast<double>(depth));
  }

 private:
  Histogram& sizes_;
  prometheus::Gauge& depth_;
  prometheus::Counter& rejected_;
};

}  // namespace

struct ServerMetrics::State {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<Histogram>& stage =
      prometheus::BuildHistogram()
          .Name("kotae_stage_seconds")
          .Help("Time per answer stage (embed, retrieve, rerank, generate) and end to end")
          .Register(*registry);
  prometheus::Family<Histogram>& request_seconds = prometheus::BuildHistogram()
                                                       .Name("kotae_http_request_duration_seconds")
                                                       .Help("HTTP request latency by method and route")
                                                       .Register(*registry);
  prometheus::Family<prometheus::Counter>& requests = prometheus::BuildCounter()
                                                          .Name("kotae_http_requests_total")
                                                          .Help("HTTP requests by method, route and status class")
                                                          .Register(*registry);
  prometheus::Family<prometheus::Counter>& prompt_tokens = prometheus::BuildCounter()
                                                               .Name("kotae_prompt_tokens_total")
                                                               .Help("Prompt tokens read by a generator, by back-end")
                                                               .Register(*registry);
  prometheus::Family<prometheus::Counter>& generated_tokens = prometheus::BuildCounter()
                                                                  .Name("kotae_generated_tokens_total")
                                                                  .Help("Tokens generated, by back-end")
                                                                  .Register(*registry);
  prometheus::Family<Histogram>& first_token =
      prometheus::BuildHistogram()
          .Name("kotae_time_to_first_token_seconds")
          .Help("Time from a generation's start to its first token, by back-end")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& build =
      prometheus::BuildGauge().Name("kotae_build_info").Help("Kotae's version (value 1)").Register(*registry);
  prometheus::Family<Histogram>& batch_size =
      prometheus::BuildHistogram().Name("kotae_batch_size").Help("Requests per model batch").Register(*registry);
  prometheus::Family<prometheus::Gauge>& queue_depth = prometheus::BuildGauge()
                                                           .Name("kotae_batch_queue_depth")
                                                           .Help("Requests waiting in a model's batcher")
                                                           .Register(*registry);
  prometheus::Family<prometheus::Counter>& batch_rejected =
      prometheus::BuildCounter()
          .Name("kotae_batch_rejected_total")
          .Help("Requests refused because a model's queue was full")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& work_queue =
      prometheus::BuildGauge()
          .Name("kotae_work_queue")
          .Help("Requests waiting for (queued) or running on (busy) the work pool")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& audit_dropped =
      prometheus::BuildGauge()
          .Name("kotae_audit_events_dropped")
          .Help("Audit events logged but not stored since start, because the recorder's queue was full")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& cache = prometheus::BuildCounter()
                                                       .Name("kotae_answer_cache_total")
                                                       .Help("Answer cache lookups by result")
                                                       .Register(*registry);
  prometheus::Family<Histogram>& similarity =
      prometheus::BuildHistogram()
          .Name("kotae_retrieved_similarity")
          .Help("Cosine similarity between a question and each retrieved source")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& ingested = prometheus::BuildCounter()
                                                          .Name("kotae_ingested_total")
                                                          .Help("Ingested documents, bytes and chunks")
                                                          .Register(*registry);
  prometheus::Family<prometheus::Counter>& ingest_seconds = prometheus::BuildCounter()
                                                                .Name("kotae_ingest_seconds_total")
                                                                .Help("Time spent indexing uploaded documents")
                                                                .Register(*registry);
  prometheus::Family<prometheus::Gauge>& provider =
      prometheus::BuildGauge()
          .Name("kotae_model_info")
          .Help("Loaded models and the execution provider each runs on (value 1)")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& gpu_failovers =
      prometheus::BuildCounter()
          .Name("kotae_gpu_failovers_total")
          .Help("Models moved to the CPU because their GPU failed after loading")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& answers =
      prometheus::BuildCounter().Name("kotae_answers_total").Help("Answers by back-end").Register(*registry);
  prometheus::Family<prometheus::Counter>& fallbacks =
      prometheus::BuildCounter()
          .Name("kotae_fallbacks_total")
          .Help("Answers and searches that passed over a failed back-end or stage (rerank), by its name")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& rerank_service = prometheus::BuildCounter()
                                                                .Name("kotae_rerank_service_calls_total")
                                                                .Help("Calls to the reranking service by outcome")
                                                                .Register(*registry);
  prometheus::Family<prometheus::Gauge>& rerank_circuit =
      prometheus::BuildGauge()
          .Name("kotae_rerank_service_circuit_open")
          .Help("1 while the reranking service is skipped after failing (its circuit open)")
          .Register(*registry);
  std::mutex rerank_mutex;
  RerankServiceStats rerank_seen;  // what set_rerank_service last counted
  std::mutex observers_mutex;
  std::vector<std::shared_ptr<BatchMetrics>> observers;
  std::unique_ptr<GpuTelemetry> gpus = GpuTelemetry::open();  // null without a GPU
};

ServerMetrics::ServerMetrics() : state_(std::make_unique<State>()) {
  state_->build.Add({{"version", KOTAE_VERSION}}).Set(1);
}
ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::request_done(const std::string& method, const std::string& route, int status, double seconds) {
  auto& s = *state_;
  // Every label value comes from a fixed set, whatever the client sends: a stranger cannot grow the
  // exposition (and the server's memory) one made-up method or status at a time.
  static const std::array<std::string, 6> kMethods = {"GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS"};
  const bool known = std::find(kMethods.begin(), kMethods.end(), method) != kMethods.end();
  const std::string known_method = known ? method : std::string("OTHER");
  const std::string status_class = std::to_string(std::clamp(status / 100, 1, 5)) + "xx";
  s.request_seconds.Add({{"method", known_method}, {"route", route}}, latency_buckets()).Observe(seconds);
  s.requests.Add({{"method", known_method}, {"route", route}, {"status", status_class}}).Increment();
}

void ServerMetrics::generation(const std::string& backend, const GenerationStats& stats) {
  if (stats.prompt_tokens == 0 && stats.generated_tokens == 0) return;  // no generator ran (extractive)
  auto& s = *state_;
  s.prompt_tokens.Add({{"backend", backend}}).Increment(static_cast<double>(stats.prompt_tokens));
  s.generated_tokens.Add({{"backend", backend}}).Increment(static_cast<double>(stats.generated_tokens));
  if (stats.generated_tokens > 0)
    s.first_token.Add({{"backend", backend}}, latency_buckets()).Observe(stats.prompt_ms / 1000.0);
}

void ServerMetrics::answer(const rag::Answer& a, bool cached) {
  auto& s = *state_;
  s.answers.Add({{"backend", a.backend}, {"cached", cached ? "true" : "false"}}).Increment();
  if (cached) return;  // its stages ran when it was first answered
  for (const auto& f : a.fallbacks) s.fallbacks.Add({{"backend", f.backend}}).Increment();
  generation(a.backend, a.generation);
  const auto& t = a.timings;
  for (const auto& [stage, ms] : {std::pair{"embed", t.embed},
                                  {"retrieve", t.retrieve},
                                  {"rerank", t.rerank},
                                  {"generate", t.generate},
                                  {"end_to_end", t.total}}) {
    s.stage.Add({{"stage", stage}}, latency_buckets()).Observe(ms / 1000.0);
  }
  auto& similarity =
      s.similarity.Add({}, Histogram::BucketBoundaries{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0});
  for (const auto& source : a.sources) similarity.Observe(source.relevance);
}

void ServerMetrics::search(const search::SearchResult& result) {
  auto& s = *state_;
  const auto& t = result.timing;
  s.stage.Add({{"stage", "embed"}}, latency_buckets()).Observe(t.embed / 1000.0);
  s.stage.Add({{"stage", "retrieve"}}, latency_buckets()).Observe((t.bm25 + t.vector + t.fuse + t.fetch) / 1000.0);
  s.stage.Add({{"stage", "rerank"}}, latency_buckets()).Observe(t.rerank / 1000.0);
  for (const auto& f : result.fallbacks) s.fallbacks.Add({{"backend", f.backend}}).Increment();
}

void ServerMetrics::set_rerank_service(const RerankServiceStats& stats) {
  auto& s = *state_;
  std::lock_guard lock(s.rerank_mutex);
  for (const auto& [outcome, now, seen] : {std::tuple{"sent", stats.calls, s.rerank_seen.calls},
                                           {"failed", stats.failures, s.rerank_seen.failures},
                                           {"skipped", stats.skipped, s.rerank_seen.skipped}}) {
    s.rerank_service.Add({{"outcome", outcome}}).Increment(static_cast<double>(now - seen));
  }
  s.rerank_circuit.Add({}).Set(stats.circuit_open ? 1 : 0);
  s.rerank_seen = stats;
}

void ServerMetrics::cache_lookup(bool hit) {
  state_->cache.Add({{"result", hit ? "hit" : "miss"}}).Increment();
}

void ServerMetrics::ingested(std::uint64_t bytes, std::size_t chunks, double seconds) {
  auto& s = *state_;
  s.ingested.Add({{"unit", "documents"}}).Increment();
  s.ingested.Add({{"unit", "bytes"}}).Increment(static_cast<double>(bytes));
  s.ingested.Add({{"unit", "chunks"}}).Increment(static_cast<double>(chunks));
  s.ingest_seconds.Add({}).Increment(seconds);
}

void ServerMetrics::model_loaded(const std::string& model, const std::string& provider) {
  state_->provider.Add({{"model", model}, {"provider", provider}}).Set(1);
}

void ServerMetrics::gpu_failover(const std::string& model, const std::string& from, const std::string& to) {
  state_->gpu_failovers.Add({{"model", model}}).Increment();
  state_->provider.Add({{"model", model}, {"provider", from}}).Set(0);
  model_loaded(model, to);
}

std::shared_ptr<batch::BatchObserver> ServerMetrics::batch_observer(const std::string& model) {
  auto& s = *state_;
  auto observer = std::make_shared<BatchMetrics>(
      s.batch_size.Add({{"model", model}}, Histogram::BucketBoundaries{1, 2, 4, 8, 16, 32, 64, 128}),
      s.queue_depth.Add({{"model", model}}), s.batch_rejected.Add({{"model", model}}));
  std::lock_guard lock(s.observers_mutex);
  s.observers.push_back(observer);
  return observer;
}

void ServerMetrics::set_work_queue(std::size_t queued, std::size_t busy) {
  state_->work_queue.Add({{"state", "queued"}}).Set(static_cast<double>(queued));
  state_->work_queue.Add({{"state", "busy"}}).Set(static_cast<double>(busy));
}

void ServerMetrics::set_audit_dropped(std::uint64_t dropped) {
  state_->audit_dropped.Add({}).Set(static_cast<double>(dropped));
}

void ServerMetrics::set_batch_queue(const std::string& model, std::size_t depth) {
  state_->queue_depth.Add({{"model", model}}).Set(static_cast<double>(depth));
}

std::string ServerMetrics::text() const {
  const auto& gpus = state_->gpus;
  return prometheus::TextSerializer().Serialize(state_->registry->Collect()) + process_metrics_text() +
         (gpus ? gpu_metrics_text(gpus->sample()) : "");
}

}  // namespace kotae::server
