#include "rag/answer_backends.h"

#include "core/paths.h"
#include "model/model_manifest.h"

namespace kotae::rag {

namespace fs = std::filesystem;

Result<fs::path> find_gguf(const fs::path& data_dir, const std::string& model) {
  std::error_code ec;
  if (fs::is_regular_file(model, ec)) return fs::path(model);
  const fs::path dir = models_dir(data_dir) / model;
  auto manifest = load_model_manifest(dir);
  if (!manifest) return make_error(ErrorCode::not_found, "no GGUF file or installed model '" + model + "'");
  const ModelFile* gguf = manifest->file_with_role("gguf");
  if (!gguf) return make_error(ErrorCode::invalid_argument, "model '" + model + "' has no GGUF file");
  if (!fs::is_regular_file(dir / gguf->path, ec)) {
    return make_error(ErrorCode::not_found, "model '" + model + "' is not installed (scripts/setup --model " + model + ")");
  }
  return dir / gguf->path;
}

Generator* AnswerBackends::first_generator() const {
  for (const auto& b : order) {
    if (b.generator) return b.generator;
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
      } else if (auto loaded = LlamaGenerator::load(*path, {.context_length = o.context, .threads = o.threads,
                                                            .chat_template = o.chat_template});
                 !loaded) {
        backend.unavailable = loaded.error().message;
      } else {
        b.llama = std::move(*loaded);
        backend.generator = b.llama.get();
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
        b.openai = std::move(*client);
        backend.generator = b.openai.get();
      }
      b.order.push_back(std::move(backend));
    } else if (name == "extractive") {
      b.order.push_back({"extractive"});
    } else {
      return make_error(ErrorCode::invalid_argument, "unknown back-end '" + name + "' (llama, openai or extractive)");
    }
  }
  return b;
}

}  // namespace kotae::rag
