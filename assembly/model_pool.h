#pragma once
// The models the server runs, loaded once and shared by every request: embedding models (each behind
// its dynamic batcher, so concurrent requests share batches), the reranker and the answer back-ends.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "batch/batched_encoder.h"
#include "batch/batched_reranker.h"
#include "core/result.h"
#include "model/gpu_failover.h"
#include "model/installed_models.h"
#include "model/rerank_service_client.h"
#include "model/reranker.h"
#include "model/sentence_encoder.h"
#include "rag/answer_backends.h"

namespace kotae::assembly {

struct ModelPoolOptions {
  std::filesystem::path data_dir;
  std::string embedder;  // loaded and warmed up at start; empty: the default embedding model
  std::string reranker;  // a cross-encoder in DATA/models; empty: none (POST /v1/rerank uses cosine)
  // A reranking service (--rerank-url) in the cross-encoder's place; its url empty: none. Not both.
  RerankServiceOptions rerank_service;
  // How the embedders and the reranker run on ONNX Runtime: providers, threads, graph optimisation,
  // deterministic kernels, precision (fp16: the manifest's FP16 variant). Spinning is always off here.
  EncoderOptions encoder;
  rag::BackendSettings backends;
  // "NAME=MODEL" (--alias): another name the OpenAI- and TEI-style endpoints accept for an installed
  // model or a back-end's generator, so a client with a hard-coded model name needs no change.
  std::vector<std::string> aliases;
  batch::BatchPolicy batch;
  // Told of each model with a batcher (embedders, the reranker) as it loads; the batcher reports to the
  // observer returned.
  std::function<std::shared_ptr<batch::BatchObserver>(const std::string& model, const std::string& provider)>
      on_model_loaded;
  // Told when a model's GPU fails after loading and the model moves to the CPU (model/gpu_failover.h).
  std::function<void(const std::string& model, const GpuFailure& failure)> on_gpu_failure;
};

struct EmbedderStatus {
  std::string model;
  std::string id;
  std::string provider;
  std::string precision;  // what it computes in: fp32, fp16 or int8
  std::size_t queue_depth = 0;
};

class ModelPool {
 public:
  static Result<std::unique_ptr<ModelPool>> load(const ModelPoolOptions& options);

  // The batched encoder of an installed embedding model; loaded (and warmed up) on first use.
  Result<std::shared_ptr<const Encoder>> encoder(const std::string& model);
  // The same model and batcher at bulk priority (ingestion): interactive requests go first in a batch.
  Result<std::shared_ptr<const Encoder>> bulk_encoder(const std::string& model);
  const std::string& default_embedder() const { return default_embedder_; }
  const batch::BatchPolicy& batch_policy() const { return policy_; }
  // The rerank stage: the cross-encoder (behind its batcher), the reranking service (--rerank-url) in
  // its place, or null when neither is configured.
  const Reranker* cross_encoder() const {
    return cross_encoder_ ? static_cast<const Reranker*>(cross_encoder_.get()) : rerank_service_.get();
  }
  // The reranking service, or null: its scores are the service's own (TEI's and Cohere's probabilities,
  // llama.cpp's logits), so the rerank routes pass them on as they are.
  const RerankServiceClient* rerank_service() const { return rerank_service_.get(); }
  const std::string& reranker_model() const { return reranker_model_; }  // its name in DATA/models
  // What DATA/models holds now (read from the manifests on each call).
  std::vector<InstalledModel> installed() const;
  // What POST /v1/rerank scores with: the cross-encoder, else cosine over the default embedder.
  const Reranker& reranker() const { return cross_encoder() ? *cross_encoder() : *embedding_reranker_; }
  const rag::AnswerBackends& backends() const { return backends_; }
  std::vector<EmbedderStatus> embedders() const;
  // The model an alias stands for; any other name as it is.
  const std::string& resolve(const std::string& name) const;
  const std::map<std::string, std::string>& aliases() const { return aliases_; }
  // The generator a request names: its id ("llama.cpp:…"), the model it was started with (--model,
  // --openai-model), its back-end's name, or an alias of one of these; null when none does.
  Generator* generator(const std::string& name) const;
  // The name a generator was started with (--model, --openai-model), or its id.
  std::string generator_model(const Generator& generator) const;
  std::size_t reranker_queue_depth() const { return cross_encoder_ ? cross_encoder_->queue_depth() : 0; }

 private:
  ModelPool() = default;

  struct Loaded {
    std::shared_ptr<const Encoder> model;
    std::shared_ptr<batch::EncoderBatcher> batcher;
    std::shared_ptr<const Encoder> batched;
    std::shared_ptr<const Encoder> bulk;
  };
  const Loaded* find(const std::string& model) const;  // null: not loaded yet
  Result<const Loaded*> load_embedder(const std::string& model);
  Result<void> set_aliases(const std::vector<std::string>& entries);
  OnGpuFailure failure_reporter(const std::string& model) const;  // on_gpu_failure_ for one model

  std::filesystem::path data_dir_;
  batch::BatchPolicy policy_;
  std::function<std::shared_ptr<batch::BatchObserver>(const std::string&, const std::string&)> on_model_loaded_;
  std::function<void(const std::string&, const GpuFailure&)> on_gpu_failure_;
  EncoderOptions encoder_options_;
  std::string default_embedder_;
  mutable std::mutex mutex_;  // guards embedders_, only while it is read or added to
  std::mutex load_mutex_;     // held while a model loads
  std::map<std::string, Loaded> embedders_;
  std::unique_ptr<batch::BatchedReranker> cross_encoder_;
  std::unique_ptr<RerankServiceClient> rerank_service_;
  std::string reranker_model_;
  std::unique_ptr<Reranker> embedding_reranker_;
  rag::AnswerBackends backends_;
  std::map<std::string, std::string> aliases_;
  std::map<std::string, std::string> generator_models_;  // model name given (--model, --openai-model) -> back-end
};

}  // namespace kotae::assembly
