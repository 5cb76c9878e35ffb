#include "rag/answer_backends.h"

#include "core/paths.h"
#include "model/model_integrity.h"

namespace kotae::rag {

namespace fs = std::filesystem;

Result<fs::path> find_gguf(const fs::path& data_dir, const std::string& model) {
  // Only installed models, through the integrity gate: llama.cpp never reads a file the manifest (and,
  // where keys are trusted, its signature) does not vouch for.
  auto policy = integrity_policy(data_dir);
  if (!policy) return policy.error();
  auto verified = verify_model(models_dir(data_dir), model, *policy, "generator");
  if (!verified) {
    Error error = verified.error();
    if (model.find('/') != std::string::npos || model.ends_with(".gguf")) {
      error.message += " (models load only from " + models_dir(data_dir).string() +
                       "; install a GGUF file with: kotae model add FILE --name NAME)";
    } else if (error.code == ErrorCode::not_found) {
      error.message += " (scripts/setup --model " + model +
                       " installs the models Kotae lists; kotae model add FILE --name " + model + " any GGUF file)";
    }
    return error;
  }
  const ModelFile* gguf = verified->manifest.file_with_role("gguf");
  if (!gguf) return make_error(ErrorCode::invalid_argument, "model '" + model + "' has no GGUF file");
  return verified->dir / gguf->path;
}

Generator* AnswerBackends::first_generator() const {
  for (const auto& b : order) {
    if (b.answerer && b.answerer->generator()) return b.answerer->generator();
  }
  return nullptr;
}

Result<AnswerBackends> set_up_backends(const BackendSettings& o) {
  std::vector<std::string> names = o.order;
  if (names.empty()) {
    if (!o.model.empty()) names.push_back("llama");
    if (!o.openai_url.empty()) names.push_back("openai");
    names.push_back("extractive");
  }
  AnswerBackends b;
  for (const auto& name : names) {
    if (name == "llama") {
      AnswerBackend backend{"llama.cpp"};
      if (o.model.empty()) {
        backend.unavailable = "no model given (--model)";
      } else if (auto path = find_gguf(o.data_dir, o.model); !path) {
        backend.unavailable = path.error().message;
      } else if (auto loaded = LlamaGenerator::load(*path, {.context_length = o.context,
                                                            .parallel = o.parallel,
                                                            .max_queued = o.max_queued,
                                                            .threads = o.threads,
                                                            .gpu_layers = o.gpu_layers,
                                                            .niceness = o.niceness,
                                                            .chat_template = o.chat_template});
                 !loaded) {
        backend.unavailable = loaded.error().message;
      } else {
        backend = generator_backend(backend.name, std::shared_ptr<Generator>(std::move(*loaded)));
      }
      b.order.push_back(std::move(backend));
    } else if (name == "openai") {
      AnswerBackend backend{"openai"};
      OpenAIChatOptions options;
      options.base_url = o.openai_url;
      options.model = o.openai_model;
      options.api_key = o.openai_api_key;
      options.context_tokens = static_cast<std::size_t>(o.context);
      options.request_timeout_ms = o.openai_timeout_ms;
      if (o.openai_url.empty()) {
        backend.unavailable = "no server given (--openai-url)";
      } else if (auto client = OpenAIChatClient::create(options); !client) {
        backend.unavailable = client.error().message;
      } else {
        backend = generator_backend(backend.name, std::shared_ptr<Generator>(std::move(*client)));
      }
      b.order.push_back(std::move(backend));
    } else if (name == "workers") {
      AnswerBackend backend{"workers"};
      if (!o.workers) {
        backend.unavailable = "no work queue (--queue) to reach answer workers through";
      } else {
        backend = generator_backend(backend.name, o.workers);
      }
      b.order.push_back(std::move(backend));
    } else if (name == "extractive") {
      b.order.push_back(extractive_backend());
    } else {
      return make_error(ErrorCode::invalid_argument,
                        "unknown back-end '" + name + "' (llama, openai, workers or extractive)");
    }
  }
  return b;
}

}  // namespace kotae::rag
