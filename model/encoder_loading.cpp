#include "model/encoder_loading.h"

#include <cstdlib>

#include "model/cuda_cross_encoder.h"
#include "model/cuda_sentence_encoder.h"
#include "model/gpu_failover.h"
#include "platform/cpu_features.h"

namespace kotae {
namespace {

bool cpu_has_vnni() {
  static const bool vnni = [] {
    const CpuFeatures cpu = detect_cpu_features();
    return cpu.avx512_vnni || cpu.avx_vnni || cpu.amx_int8;
  }();
  return vnni;
}

}  // namespace

Result<EncoderOptions::Precision> cpu_precision(const std::filesystem::path& model_dir) {
  using Precision = EncoderOptions::Precision;
  const char* choice = std::getenv("KOTAE_PRECISION");
  const std::string wanted = choice ? choice : "auto";
  if (wanted != "auto" && wanted != "fp32" && wanted != "int8") {
    return make_error(ErrorCode::invalid_argument, "KOTAE_PRECISION='" + wanted + "': auto, fp32 or int8");
  }
  if (wanted == "fp32") return Precision::fp32;
  auto manifest = load_model_manifest(model_dir);
  if (!manifest || !manifest->file_with_role("onnx-int8")) return Precision::fp32;  // loading says what is wrong
  return wanted == "int8" || cpu_has_vnni() ? Precision::int8 : Precision::fp32;
}

namespace {

// The CUDA engine if KOTAE_ENCODER allows and it loads, else the ONNX one; why_not_cuda as above.
// Under "auto" the CUDA engine has the ONNX one behind it, loaded if the GPU fails (gpu_failover.h).
template <class Interface, class LoadCuda, class LoadOnnx>
Result<std::unique_ptr<Interface>> load_best(LoadCuda load_cuda, LoadOnnx load_onnx, std::string* why_not_cuda,
                                             const OnGpuFailure& on_gpu_failure) {
  const char* choice = std::getenv("KOTAE_ENCODER");
  const std::string wanted = choice ? choice : "auto";
  if (wanted != "auto" && wanted != "onnx" && wanted != "cuda") {
    return make_error(ErrorCode::invalid_argument, "KOTAE_ENCODER='" + wanted + "': auto, onnx or cuda");
  }
  std::string reason = "KOTAE_ENCODER=onnx";
  if (wanted != "onnx") {
    auto cuda = load_cuda();
    if (cuda) {
      if (why_not_cuda) why_not_cuda->clear();
      if (wanted == "cuda") return std::unique_ptr<Interface>(std::move(*cuda));  // a failure stays an error
      std::function<Result<std::unique_ptr<Interface>>()> load_cpu =
          [load_onnx]() -> Result<std::unique_ptr<Interface>> {
        auto onnx = load_onnx();
        if (!onnx) return onnx.error();
        return std::unique_ptr<Interface>(std::move(*onnx));
      };
      return with_cpu_failover(std::unique_ptr<Interface>(std::move(*cuda)), std::move(load_cpu), on_gpu_failure);
    }
    if (wanted == "cuda") return cuda.error();
    reason = cuda.error().message;
  }
  if (why_not_cuda) *why_not_cuda = reason;
  auto onnx = load_onnx();
  if (!onnx) return onnx.error();
  return std::unique_ptr<Interface>(std::move(*onnx));
}

}  // namespace

Result<std::unique_ptr<Encoder>> load_best_encoder(const std::filesystem::path& model_dir,
                                                   const EncoderOptions& options, std::string* why_not_cuda,
                                                   const OnGpuFailure& on_gpu_failure) {
  EncoderOptions chosen = options;
  // A caller that asked for FP16 (a GPU through ONNX Runtime) keeps it.
  if (options.precision == EncoderOptions::Precision::fp32)
    chosen.precision = KOTAE_TRY_VALUE(cpu_precision(model_dir));
  return load_best<Encoder>([&] { return CudaSentenceEncoder::load(model_dir); },
                            [model_dir, chosen] { return SentenceEncoder::load(model_dir, chosen); }, why_not_cuda,
                            on_gpu_failure);
}

Result<std::unique_ptr<PairScorer>> load_best_cross_encoder(const std::filesystem::path& model_dir,
                                                            const CrossEncoderOptions& options,
                                                            std::string* why_not_cuda,
                                                            const OnGpuFailure& on_gpu_failure) {
  return load_best<PairScorer>([&] { return CudaCrossEncoder::load(model_dir); },
                               [model_dir, options] { return CrossEncoder::load(model_dir, options); }, why_not_cuda,
                               on_gpu_failure);
}

}  // namespace kotae
