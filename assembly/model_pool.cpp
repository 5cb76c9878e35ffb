#include "assembly/model_pool.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "core/paths.h"
#include "model/cross_encoder.h"
#include "model/embedding_reranker.h"
#include "model/encoder_loading.h"
#include "model/installed_models.h"
#include "model/sentence_encoder.h"

namespace kotae::assembly {

Result<std::unique_ptr<ModelPool>> ModelPool::load(const ModelPoolOptions& options) {
  std::unique_ptr<ModelPool> pool(new ModelPool());
  pool->data_dir_ = options.data_dir;
  pool->policy_ = options.batch;
  pool->on_model_loaded_ = options.on_model_loaded;
  pool->on_gpu_failure_ = options.on_gpu_failure;
  pool->encoder_options_ = options.encoder;
  pool->encoder_options_.session.allow_spinning = false;  // see OnnxSessionOptions: a server idles between batches
  pool->default_embedder_ = options.embedder.empty() ? kDefaultEmbeddingModel : options.embedder;
  auto encoder = pool->encoder(pool->default_embedder_);
  if (!encoder) return encoder.error();
  pool->embedding_reranker_ = std::make_unique<EmbeddingReranker>(*encoder);
  if (!options.reranker.empty() && !options.rerank_service.url.empty()) {
    return make_error(ErrorCode::invalid_argument, "--rerank " + options.reranker +
                                                       " and --rerank-url: give one (a local cross-encoder or a "
                                                       "reranking service), not both");
  }
  if (!options.rerank_service.url.empty()) {
    // Not asked at start: a service that is down now costs each search nothing once the circuit opens,
    // and is used as soon as it answers.
    pool->rerank_service_ = KOTAE_TRY_VALUE(RerankServiceClient::create(options.rerank_service));
    pool->reranker_model_ = options.rerank_service.model;
    log_event("rerank_service", {{"api", to_string(options.rerank_service.api)},
                                 {"model", options.rerank_service.model},
                                 {"timeout_ms", options.rerank_service.timeout_ms},
                                 {"batch", options.rerank_service.max_batch}});
  }
  if (!options.reranker.empty()) {
    CrossEncoderOptions cross_options;
    cross_options.session = pool->encoder_options_.session;
    std::string why_not_cuda;
    auto cross = load_best_cross_encoder(models_dir(options.data_dir) / options.reranker, cross_options, &why_not_cuda,
                                         pool->failure_reporter(options.reranker));
    if (!cross) return cross.error();
    if (!why_not_cuda.empty() && why_not_cuda.rfind("no GPU", 0) != 0) {
      log_event("cuda_encoder_unavailable",
                {{"model", options.reranker}, {"reason", why_not_cuda}, {"using", (*cross)->provider()}},
                LogLevel::warn);
    }
    const std::string provider = (*cross)->provider();
    pool->reranker_model_ = options.reranker;
    pool->cross_encoder_ =
        std::make_unique<batch::BatchedReranker>(std::shared_ptr<const PairScorer>(std::move(*cross)), options.batch);
    if (options.on_model_loaded)
      pool->cross_encoder_->set_observer(options.on_model_loaded(options.reranker, provider));
    const std::string warm[] = {"warm-up passage"};
    if (auto scored = pool->cross_encoder_->score("warm-up", warm); !scored) return scored.error();
  }
  auto backends = rag::set_up_backends(options.backends);
  if (!backends) return backends.error();
  pool->backends_ = std::move(*backends);
  if (!options.backends.model.empty()) pool->generator_models_[options.backends.model] = "llama.cpp";
  if (!options.backends.openai_model.empty()) pool->generator_models_[options.backends.openai_model] = "openai";
  KOTAE_TRY(pool->set_aliases(options.aliases));
  return pool;
}

Result<void> ModelPool::set_aliases(const std::vector<std::string>& entries) {
  for (const auto& entry : entries) {
    const auto equals = entry.find('=');
    const std::string name = entry.substr(0, equals),
                      model = equals == std::string::npos ? "" : entry.substr(equals + 1);
    auto bad = [&](const std::string& why) {
      return make_error(ErrorCode::invalid_argument, "--alias " + entry + ": " + why);
    };
    if (name.empty() || model.empty()) return bad("give NAME=MODEL");
    if (name.size() > 128 ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") !=
            std::string::npos) {
      return bad("a name is at most 128 letters, digits, '.', '_', ':' and '-'");
    }
    if (aliases_.contains(name)) return bad("'" + name + "' is already an alias");
    std::error_code ec;
    const bool installed = std::filesystem::exists(models_dir(data_dir_) / model / "manifest.json", ec);
    if (!installed && !generator(model)) {
      std::string known;
      for (const auto& m : installed_models(models_dir(data_dir_))) known += (known.empty() ? "" : ", ") + m.name;
      for (const auto& b : backends_.order) {
        if (b.answerer && b.answerer->generator()) known += (known.empty() ? "" : ", ") + b.answerer->generator()->id();
      }
      return bad("no model '" + model + "' here (installed models and generators: " + known + ")");
    }
    aliases_.emplace(name, model);
  }
  return {};
}

OnGpuFailure ModelPool::failure_reporter(const std::string& model) const {
  if (!on_gpu_failure_) return {};
  return [report = on_gpu_failure_, model](const GpuFailure& failure) { report(model, failure); };
}

std::vector<InstalledModel> ModelPool::installed() const {
  return installed_models(models_dir(data_dir_));
}

const std::string& ModelPool::resolve(const std::string& name) const {
  const auto it = aliases_.find(name);
  return it == aliases_.end() ? name : it->second;
}

Generator* ModelPool::generator(const std::string& name) const {
  const std::string& wanted = resolve(name);
  for (const auto& b : backends_.order) {
    Generator* g = b.answerer ? b.answerer->generator() : nullptr;
    if (!g) continue;
    const auto started_as = generator_models_.find(wanted);
    if (g->id() == wanted || b.name == wanted ||
        (started_as != generator_models_.end() && started_as->second == b.name))
      return g;
  }
  return nullptr;
}

std::string ModelPool::generator_model(const Generator& generator) const {
  for (const auto& b : backends_.order) {
    if (!b.answerer || b.answerer->generator() != &generator) continue;
    for (const auto& [model, backend] : generator_models_) {
      if (backend == b.name) return model;
    }
  }
  return generator.id();
}

const ModelPool::Loaded* ModelPool::find(const std::string& model) const {
  std::lock_guard lock(mutex_);
  const auto it = embedders_.find(model);
  return it == embedders_.end() ? nullptr : &it->second;  // entries are never removed: the pointer stays valid
}

Result<const ModelPool::Loaded*> ModelPool::load_embedder(const std::string& model) {
  if (const auto* loaded = find(model)) return loaded;
  // One load at a time (two requests must not load the same model twice), but without holding the map:
  // /readyz and /metrics read it on the I/O threads and must never wait for a model to load.
  std::lock_guard loading(load_mutex_);
  if (const auto* loaded = find(model)) return loaded;
  if (model.empty() || model.find('/') != std::string::npos || model.starts_with(".")) {
    return make_error(ErrorCode::invalid_argument, "'" + model + "' is not a model name");
  }
  // A name the client chose: say which model is missing or unsuitable, not where the server keeps it.
  std::error_code ec;
  if (!std::filesystem::is_directory(models_dir(data_dir_) / model, ec)) {
    return make_error(ErrorCode::not_found, "no embedding model '" + model + "' is installed");
  }
  std::string why_not_cuda;
  auto loaded =
      load_best_encoder(models_dir(data_dir_) / model, encoder_options_, &why_not_cuda, failure_reporter(model));
  // A GPU that the native encoder could not use deserves one log line; no GPU is the normal case.
  if (loaded && !why_not_cuda.empty() && why_not_cuda.rfind("no GPU", 0) != 0) {
    log_event("cuda_encoder_unavailable",
              {{"model", model}, {"reason", why_not_cuda}, {"using", (*loaded)->provider()}}, LogLevel::warn);
  }
  if (!loaded) {
    // The client hears only that the model cannot be loaded; the operator's log says why (an integrity
    // refusal names the file and the reason).
    log_event("embedder_unavailable", {{"model", model}, {"reason", loaded.error().message}}, LogLevel::warn);
    return make_error(loaded.error().code == ErrorCode::not_found ? ErrorCode::not_found : ErrorCode::invalid_argument,
                      "'" + model + "' is not an embedding model this server can load");
  }
  Loaded entry;
  entry.model = std::shared_ptr<const Encoder>(std::move(*loaded));
  // Warm-up: the first run allocates and optimises; no request should pay for it.
  const std::string warm[] = {"warm-up"};
  if (auto vectors = entry.model->embed(warm, TextRole::passage); !vectors) return vectors.error();
  entry.batcher = std::make_shared<batch::EncoderBatcher>(entry.model, policy_);
  if (on_model_loaded_) entry.batcher->set_observer(on_model_loaded_(model, entry.model->provider()));
  entry.batched = std::make_shared<batch::BatchedEncoder>(entry.model, entry.batcher, batch::Priority::interactive);
  entry.bulk = std::make_shared<batch::BatchedEncoder>(entry.model, entry.batcher, batch::Priority::bulk);
  std::lock_guard lock(mutex_);
  return &embedders_.emplace(model, std::move(entry)).first->second;
}

Result<std::shared_ptr<const Encoder>> ModelPool::encoder(const std::string& model) {
  auto loaded = load_embedder(model);
  if (!loaded) return loaded.error();
  return (*loaded)->batched;
}

Result<std::shared_ptr<const Encoder>> ModelPool::bulk_encoder(const std::string& model) {
  auto loaded = load_embedder(model);
  if (!loaded) return loaded.error();
  return (*loaded)->bulk;
}

std::vector<EmbedderStatus> ModelPool::embedders() const {
  std::lock_guard lock(mutex_);
  std::vector<EmbedderStatus> out;
  for (const auto& [name, e] : embedders_)
    out.push_back({name, e.model->id(), e.model->provider(), e.model->precision(), e.batcher->queue_depth()});
  return out;
}

}  // namespace kotae::assembly
