#pragma once
// The fastest engine this machine runs a model on: the native CUDA kernels where a GPU, their plugin
// and the model's safetensors weights are, else ONNX Runtime. KOTAE_ENCODER=onnx keeps to ONNX
// Runtime; KOTAE_ENCODER=cuda makes a CUDA failure an error instead of a fallback. For embedding
// models (SentenceEncoder / CudaSentenceEncoder) and cross-encoders (CrossEncoder / CudaCrossEncoder).
//
// On ONNX Runtime an embedding model with a static INT8 variant (manifest role "onnx-int8") runs it
// where the CPU has VNNI, its 8-bit dot products (without them the u8s8 kernels may saturate):
// nearly twice as fast, within 1.5% of FP32's retrieval quality (docs/quality.md). KOTAE_PRECISION=fp32
// or int8 chooses instead of this "auto".

#include <filesystem>
#include <memory>
#include <string>

#include "model/cross_encoder.h"
#include "model/encoder.h"
#include "model/gpu_failover.h"
#include "model/sentence_encoder.h"

namespace kotae {

// What load_best_encoder runs an embedding model in on ONNX Runtime (fp32 or int8), by KOTAE_PRECISION
// and the CPU; an invalid KOTAE_PRECISION is an error.
Result<EncoderOptions::Precision> cpu_precision(const std::filesystem::path& model_dir);

// `why_not_cuda`, when given, receives the reason the CUDA engine was not used ("" when it was). A
// CUDA engine chosen by "auto" moves to ONNX Runtime if the GPU fails later (model/gpu_failover.h),
// and `on_gpu_failure` hears of it.
Result<std::unique_ptr<Encoder>> load_best_encoder(const std::filesystem::path& model_dir,
                                                   const EncoderOptions& options = {},
                                                   std::string* why_not_cuda = nullptr,
                                                   const OnGpuFailure& on_gpu_failure = {});
Result<std::unique_ptr<PairScorer>> load_best_cross_encoder(const std::filesystem::path& model_dir,
                                                            const CrossEncoderOptions& options = {},
                                                            std::string* why_not_cuda = nullptr,
                                                            const OnGpuFailure& on_gpu_failure = {});

}  // namespace kotae
