#include "model/onnx_session.h"

#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <cstdio>

namespace kotae {
namespace {

Ort::Env& shared_env() {
  static Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "kotae");
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

    auto impl = std::make_unique<Impl>();
    const auto available = onnxruntime_providers();
    for (const auto& wanted : options.providers) {
      if (wanted == "cpu") {
        impl->provider = "CPUExecutionProvider";
        break;
      }
      // GPU providers are plugin libraries registered by the GPU work; until then they are skipped.
      const bool in_library = std::find(available.begin(), available.end(), wanted) != available.end();
      std::fprintf(stderr, "kotae: execution provider '%s' is %s; trying the next\n", wanted.c_str(),
                   in_library ? "not enabled in this build" : "not available");
    }
    if (impl->provider.empty()) impl->provider = "CPUExecutionProvider";  // ONNX Runtime's own fallback

    impl->session = std::make_unique<Ort::Session>(shared_env(), model.c_str(), so);
    impl->inputs = names_of(*impl->session, true);
    impl->outputs = names_of(*impl->session, false);
    return std::unique_ptr<OnnxSession>(new OnnxSession(std::move(impl)));
  } catch (const Ort::Exception& e) {
    return make_error(ErrorCode::model, "ONNX Runtime cannot load " + model.string() + ": " + e.what());
  }
}

const std::vector<std::string>& OnnxSession::input_names() const { return impl_->inputs; }
const std::vector<std::string>& OnnxSession::output_names() const { return impl_->outputs; }
const std::string& OnnxSession::provider() const { return impl_->provider; }

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
    auto results = impl_->session->Run(Ort::RunOptions{nullptr}, names.data(), values.data(), values.size(),
                                       &output_name, 1);
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

std::string onnxruntime_version() { return Ort::GetVersionString(); }

std::vector<std::string> onnxruntime_providers() { return Ort::GetAvailableProviders(); }

}  // namespace kotae
