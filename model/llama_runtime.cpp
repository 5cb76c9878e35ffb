#include "model/llama_runtime.h"

#include <dlfcn.h>
#include <ggml-backend.h>
#include <ggml.h>
#include <llama.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <thread>

#include "core/log.h"

namespace kotae {
namespace {

// llama.cpp logs every tensor at load: its info lines are Kotae's debug ones; warnings and errors
// are lines of Kotae's log (a continuation piece is dropped: it has no level of its own).
void route_log(ggml_log_level level, const char* text, void*) {
  const LogLevel ours = level == GGML_LOG_LEVEL_ERROR  ? LogLevel::error
                        : level == GGML_LOG_LEVEL_WARN ? LogLevel::warn
                                                       : LogLevel::debug;
  if (level == GGML_LOG_LEVEL_CONT || !text || !log_enabled(ours)) return;
  log_library(ours, "llama.cpp", text);
}

// The CPU back-end's compiled features and extra weight buffer types, asked through its registry
// entry points (the back-end is a loaded library, so not linked against directly).
void describe_cpu_backend(LlamaBuildInfo& info) {
  ggml_backend_reg_t cpu = ggml_backend_reg_by_name("CPU");
  if (!cpu) return;
  if (auto features = reinterpret_cast<ggml_backend_get_features_t>(
          ggml_backend_reg_get_proc_address(cpu, "ggml_backend_get_features"))) {
    for (const ggml_backend_feature* f = features(cpu); f && f->name; ++f) {
      if (std::string_view(f->value) == "1") info.cpu_features.emplace_back(f->name);
    }
  }
  auto extra = reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(
      ggml_backend_reg_get_proc_address(cpu, "ggml_backend_dev_get_extra_bufts"));
  ggml_backend_dev_t device = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  if (extra && device) {
    for (ggml_backend_buffer_type_t* b = extra(device); b && *b; ++b)
      info.cpu_weight_layouts.emplace_back(ggml_backend_buft_name(*b));
  }
}

// The folder of the libggml this process loaded: the prebuilt libraries keep their CPU back-end's
// variants beside it (the cache in a dev build, /usr/lib/kotae in the package).
std::string loaded_ggml_folder() {
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(&ggml_backend_load_all_from_path), &where) == 0 || !where.dli_fname) return {};
  return std::filesystem::path(where.dli_fname).parent_path().string();
}

LlamaBuildInfo load_backends() {
  LlamaBuildInfo info;
  llama_log_set(route_log, nullptr);
  const char* from_env = std::getenv("KOTAE_GGML_BACKEND_DIR");
  info.backend_dir = from_env && *from_env ? from_env : loaded_ggml_folder();
  ggml_backend_load_all_from_path(info.backend_dir.empty() ? nullptr : info.backend_dir.c_str());
  llama_backend_init();
  info.version = llama_version();
  info.ggml_version = ggml_version();
  info.ggml_commit = ggml_commit();
  for (size_t i = 0; i < ggml_backend_reg_count(); ++i)
    info.backends.emplace_back(ggml_backend_reg_name(ggml_backend_reg_get(i)));
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    info.devices.push_back(std::string(ggml_backend_dev_name(dev)) + ": " + ggml_backend_dev_description(dev));
  }
  info.gpu_offload = llama_supports_gpu_offload();
  describe_cpu_backend(info);
  return info;
}

}  // namespace

bool LlamaBuildInfo::uses_amx() const {
  return std::find(cpu_weight_layouts.begin(), cpu_weight_layouts.end(), "AMX") != cpu_weight_layouts.end();
}

const LlamaBuildInfo& llama_build_info() {
  static const LlamaBuildInfo info = load_backends();
  return info;
}

struct LlamaModel::Impl {
  llama_model* model = nullptr;
  llama_context* context = nullptr;
  int context_length = 0;

  ~Impl() {
    if (context) llama_free(context);
    if (model) llama_model_free(model);
  }
};

LlamaModel::LlamaModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LlamaModel::~LlamaModel() = default;

Result<std::unique_ptr<LlamaModel>> LlamaModel::load(const std::filesystem::path& gguf,
                                                     const LlamaModelOptions& options) {
  llama_build_info();
  auto impl = std::make_unique<Impl>();
  auto model_params = llama_model_default_params();
  model_params.n_gpu_layers = options.gpu_layers;
  impl->model = llama_model_load_from_file(gguf.c_str(), model_params);
  if (!impl->model) return make_error(ErrorCode::model, "llama.cpp cannot load " + gguf.string());

  auto context_params = llama_context_default_params();
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  context_params.n_ctx = static_cast<uint32_t>(options.context_length);
  context_params.n_batch = context_params.n_ctx;
  context_params.n_ubatch = context_params.n_ctx;
  context_params.n_threads = threads;
  context_params.n_threads_batch = threads;
  impl->context = llama_init_from_model(impl->model, context_params);
  if (!impl->context) return make_error(ErrorCode::model, "llama.cpp cannot create a context for " + gguf.string());
  impl->context_length = options.context_length;
  return std::unique_ptr<LlamaModel>(new LlamaModel(std::move(impl)));
}

int LlamaModel::vocab_size() const {
  return llama_vocab_n_tokens(llama_model_get_vocab(impl_->model));
}

int LlamaModel::embedding_length() const {
  return llama_model_n_embd(impl_->model);
}

std::string LlamaModel::description() const {
  char buffer[256] = {};
  llama_model_desc(impl_->model, buffer, sizeof buffer);
  return buffer;
}

Result<std::vector<float>> LlamaModel::logits(std::span<const std::int32_t> tokens) {
  if (tokens.empty()) return make_error(ErrorCode::invalid_argument, "no tokens to evaluate");
  if (static_cast<int>(tokens.size()) > impl_->context_length) {
    return make_error(ErrorCode::invalid_argument, std::to_string(tokens.size()) + " tokens exceed the context of " +
                                                       std::to_string(impl_->context_length));
  }
  const int vocab = vocab_size();
  for (auto t : tokens) {
    if (t < 0 || t >= vocab)
      return make_error(ErrorCode::invalid_argument, "token id " + std::to_string(t) + " is outside the vocabulary");
  }
  llama_memory_clear(llama_get_memory(impl_->context), true);
  const auto n = static_cast<std::int32_t>(tokens.size());
  llama_batch batch = llama_batch_init(n, 0, 1);
  for (std::int32_t i = 0; i < n; ++i) {
    batch.token[i] = tokens[i];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = n;
  const int rc = llama_decode(impl_->context, batch);
  llama_batch_free(batch);
  if (rc != 0) return make_error(ErrorCode::model, "llama_decode failed with code " + std::to_string(rc));
  std::vector<float> out;
  out.reserve(static_cast<size_t>(n) * vocab);
  for (std::int32_t i = 0; i < n; ++i) {
    const float* row = llama_get_logits_ith(impl_->context, i);
    if (!row) return make_error(ErrorCode::model, "llama.cpp returned no logits for position " + std::to_string(i));
    out.insert(out.end(), row, row + vocab);
  }
  return out;
}

}  // namespace kotae
