#include "model/onnx_session.h"

#include <onnxruntime_cxx_api.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/log.h"

namespace kotae {
namespace {

void log_once(const std::string& event, nlohmann::json fields) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (said.insert(event + fields.dump()).second) log_event(event, std::move(fields), LogLevel::warn);
}

// ONNX Runtime's own messages, as lines of Kotae's log.
void ORT_API_CALL ort_log(void*, OrtLoggingLevel severity, const char* category, const char*, const char* location,
                          const char* message) {
  const LogLevel level = severity >= ORT_LOGGING_LEVEL_ERROR     ? LogLevel::error
                         : severity >= ORT_LOGGING_LEVEL_WARNING ? LogLevel::warn
                         : severity >= ORT_LOGGING_LEVEL_INFO    ? LogLevel::info
                                                                 : LogLevel::debug;
  if (!log_enabled(level)) return;
  log_event("library",
            {{"source", "onnxruntime"},
             {"category", category ? category : ""},
             {"location", location ? location : ""},
             {"message", message ? message : ""}},
            level);
}

Ort::Env& shared_env() {
  // Made on first use, after --log-level is set: debug shows ONNX Runtime's info lines too.
  static Ort::Env env(log_enabled(LogLevel::debug) ? ORT_LOGGING_LEVEL_INFO : ORT_LOGGING_LEVEL_WARNING, "kotae",
                      ort_log, nullptr);
  return env;
}

GraphOptimizationLevel to_ort(GraphOptimization level) {
  switch (level) {
    case GraphOptimization::none: return ORT_DISABLE_ALL;
    case GraphOptimization::basic: return ORT_ENABLE_BASIC;
    case GraphOptimization::extended: return ORT_ENABLE_EXTENDED;
    case GraphOptimization::all: return ORT_ENABLE_ALL;
  }
  return ORT_ENABLE_ALL;
}

// The GPU providers ship as plugin libraries (ONNX Runtime's GPU package): register the library, then
// append the devices it offers. Returns an empty string on success, else why it was skipped.
std::string append_plugin_provider(Ort::SessionOptions& so, const std::string& short_name, const std::string& ort_name,
                                   const std::filesystem::path& dir) {
  const auto library = dir / ("libonnxruntime_providers_" + short_name + ".so");
  if (!std::filesystem::exists(library)) return "provider library " + library.string() + " not found";
  static std::mutex registering;
  static std::set<std::string> registered;
  std::lock_guard lock(registering);
  try {
    if (!registered.count(short_name)) {
      shared_env().RegisterExecutionProviderLibrary(short_name.c_str(), library.string());
      registered.insert(short_name);
    }
    std::vector<Ort::ConstEpDevice> devices;
    for (const auto& device : shared_env().GetEpDevices()) {
      if (ort_name == device.EpName()) devices.push_back(device);
    }
    if (devices.empty()) return "no device for " + ort_name + " (no GPU, or its driver or libraries are missing)";
    so.AppendExecutionProvider_V2(shared_env(), devices, std::unordered_map<std::string, std::string>{});
    return {};
  } catch (const Ort::Exception& e) {
    return std::string("cannot load: ") + e.what();
  }
}

std::filesystem::path default_provider_dir() {
  if (const char* dir = std::getenv("KOTAE_ORT_PROVIDER_DIR"); dir && *dir) return dir;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OrtGetApiBase), &info) && info.dli_fname) {
    return std::filesystem::path(info.dli_fname).parent_path();
  }
  return {};
}

// Walks the priority list; the first provider that can be appended wins (CPU always can).
std::string choose_provider(Ort::SessionOptions& so, const OnnxSessionOptions& options,
                            std::vector<std::string>& skipped) {
  static const std::map<std::string, std::string> kOrtNames = {
      {"tensorrt", "TensorrtExecutionProvider"}, {"cuda", "CUDAExecutionProvider"}, {"cpu", "CPUExecutionProvider"}};
  const std::filesystem::path dir =
      options.provider_dir.empty() ? default_provider_dir() : std::filesystem::path(options.provider_dir);
  for (const auto& wanted : options.providers) {
    if (wanted == "cpu") return "CPUExecutionProvider";
    const auto known = kOrtNames.find(wanted);
    std::string reason =
        known == kOrtNames.end() ? "unknown provider" : append_plugin_provider(so, wanted, known->second, dir);
    if (reason.empty()) return known->second;
    skipped.push_back(wanted + ": " + reason);
    log_once("execution_provider_skipped", {{"provider", wanted}, {"reason", reason}});
  }
  return "CPUExecutionProvider";  // ONNX Runtime always falls back to its CPU kernels
}

std::vector<std::string> names_of(const Ort::Session& session, bool inputs) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<std::string> names;
  const size_t count = inputs ? session.GetInputCount() : session.GetOutputCount();
  for (size_t i = 0; i < count; ++i) {
    auto name = inputs ? session.GetInputNameAllocated(i, allocator) : session.GetOutputNameAllocated(i, allocator);
    names.emplace_back(name.get());
  }
  return names;
}

}  // namespace

struct OnnxSession::Impl {
  std::unique_ptr<Ort::Session> session;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string provider;
  std::vector<std::string> skipped;
};

OnnxSession::OnnxSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnnxSession::~OnnxSession() = default;

Result<std::unique_ptr<OnnxSession>> OnnxSession::open(const std::filesystem::path& model,
                                                       const OnnxSessionOptions& options) {
  try {
    Ort::SessionOptions so;
    so.SetGraphOptimizationLevel(to_ort(options.optimization));
    so.SetIntraOpNumThreads(options.intra_op_threads);
    so.SetInterOpNumThreads(options.inter_op_threads);
    if (!options.memory_pattern) so.DisableMemPattern();
    if (!options.cpu_arena) so.DisableCpuMemArena();
    if (options.deterministic) so.SetDeterministicCompute(true);
    if (!options.allow_spinning) {
      so.AddConfigEntry("session.intra_op.allow_spinning", "0");
      so.AddConfigEntry("session.inter_op.allow_spinning", "0");
    }

    // No custom-operator library is ever registered (RegisterCustomOpsLibrary, "session.custom_ops_libraries"):
    // a graph whose nodes need operators ONNX Runtime lacks fails here, and nothing it names is dlopen'd.
    // Execution provider libraries come only from provider_dir, never from the model's folder.
    auto impl = std::make_unique<Impl>();
    impl->provider = choose_provider(so, options, impl->skipped);
    impl->session = std::make_unique<Ort::Session>(shared_env(), model.c_str(), so);
    impl->inputs = names_of(*impl->session, true);
    impl->outputs = names_of(*impl->session, false);
    return std::unique_ptr<OnnxSession>(new OnnxSession(std::move(impl)));
  } catch (const Ort::Exception& e) {
    const std::string what = e.what();
    if (what.find("not a registered function/op") != std::string::npos ||
        what.find("No opset import for domain") != std::string::npos) {
      return make_error(ErrorCode::model,
                        "ONNX Runtime cannot load " + model.string() +
                            ": the graph uses an operator ONNX Runtime does not have, and Kotae never "
                            "loads custom-operator libraries (" +
                            what + ")");
    }
    return make_error(ErrorCode::model, "ONNX Runtime cannot load " + model.string() + ": " + what);
  }
}

const std::vector<std::string>& OnnxSession::input_names() const {
  return impl_->inputs;
}
const std::vector<std::string>& OnnxSession::output_names() const {
  return impl_->outputs;
}
const std::string& OnnxSession::provider() const {
  return impl_->provider;
}
const std::vector<std::string>& OnnxSession::skipped_providers() const {
  return impl_->skipped;
}

bool OnnxSession::has_input(const std::string& name) const {
  return std::find(impl_->inputs.begin(), impl_->inputs.end(), name) != impl_->inputs.end();
}

Result<void> OnnxSession::run_erased(const std::vector<Int64Input>& inputs, const std::string& output,
                                     void (*consume)(const FloatTensorView&, void*), void* state) const {
  try {
    static const auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    std::vector<Ort::Value> values;
    std::vector<const char*> names;
    values.reserve(inputs.size());
    for (const auto& in : inputs) {
      const std::int64_t shape[2] = {in.rows, in.cols};
      values.push_back(Ort::Value::CreateTensor<std::int64_t>(memory, const_cast<std::int64_t*>(in.data),
                                                              static_cast<size_t>(in.rows * in.cols), shape, 2));
      names.push_back(in.name.c_str());
    }
    const char* output_name = output.c_str();
    auto results =
        impl_->session->Run(Ort::RunOptions{nullptr}, names.data(), values.data(), values.size(), &output_name, 1);
    auto info = results.front().GetTensorTypeAndShapeInfo();
    if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
      return make_error(ErrorCode::model, "output '" + output + "' is not a float tensor");
    }
    consume(FloatTensorView{results.front().GetTensorData<float>(), info.GetShape()}, state);
    return {};
  } catch (const Ort::Exception& e) {
    return make_error(ErrorCode::model, std::string("ONNX Runtime run failed: ") + e.what());
  }
}

std::vector<std::int64_t> OnnxSession::output_shape(const std::string& output) const {
  for (size_t i = 0; i < impl_->outputs.size(); ++i) {
    if (impl_->outputs[i] == output) {
      return impl_->session->GetOutputTypeInfo(i).GetTensorTypeAndShapeInfo().GetShape();
    }
  }
  return {};
}

std::string onnxruntime_version() {
  return Ort::GetVersionString();
}

std::vector<std::string> onnxruntime_providers() {
  return Ort::GetAvailableProviders();
}

}  // namespace kotae
