#pragma once
// What /metrics shows, in Prometheus' text format (prometheus-cpp): latency per stage and end to end,
// requests and errors by endpoint and code, batch sizes and queue depths per model, the work queue,
// answer-cache hits and misses, how similar retrieved sources were, ingestion throughput, and the
// execution provider each model runs on, tokens and time to first token per back-end, the build, the
// process_* metrics, and each GPU's utilisation, memory and temperature where there is one.
// prometheus-cpp stays behind this interface.

#include <memory>
#include <string>

#include "batch/batch_policy.h"
#include "model/rerank_service_client.h"
#include "rag/answer_pipeline.h"
#include "search/hybrid_retriever.h"

namespace kotae::server {

class ServerMetrics {
 public:
  ServerMetrics();
  ~ServerMetrics();

  // `route` is the endpoint's pattern ("/v1/collections/{name}") or "unmatched", never a raw path; the
  // method is one of the HTTP methods the API knows or OTHER; the status is counted by class (2xx ...).
  // Labels method, route and status, as Prometheus' naming guide would have them.
  void request_done(const std::string& method, const std::string& route, int status, double seconds);
  void answer(const rag::Answer& answer, bool cached);
  // A generator's work (an answer's, or a plain chat's): prompt and generated tokens, time to first token.
  void generation(const std::string& backend, const GenerationStats& stats);
  void search(const search::SearchResult& result);
  void cache_lookup(bool hit);
  void ingested(std::uint64_t bytes, std::size_t chunks, double seconds);
  void model_loaded(const std::string& model, const std::string& provider);
  // A model's GPU failed and it now runs on `to`: counted, and the provider series moves.
  void gpu_failover(const std::string& model, const std::string& from, const std::string& to);
  // The observer a model's batcher reports each batch to.
  std::shared_ptr<batch::BatchObserver> batch_observer(const std::string& model);
  void set_work_queue(std::size_t queued, std::size_t busy);
  void set_batch_queue(const std::string& model, std::size_t depth);
  // The reranking service's figures since start (--rerank-url): calls sent, failed and skipped by the open
  // circuit, HTTP requests, and whether the circuit is open now.
  void set_rerank_service(const RerankServiceStats& stats);
  // Audit events logged but not stored since start (the recorder's queue was full).
  void set_audit_dropped(std::uint64_t dropped);

  std::string text() const;  // the exposition

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kotae::server
