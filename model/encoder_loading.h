#pragma once
// The fastest engine this machine runs a model on: the native CUDA kernels where a GPU, their plugin
// and the model's safetensors weights are, else ONNX Runtime. KOTAE_ENCODER=onnx keeps to ONNX
// Runtime; KOTAE_ENCODER=cuda makes a CUDA failure an error instead of a fallback. For embedding
// models (SentenceEncoder / CudaSentenceEncoder) and cross-encoders (CrossEncoder / CudaCrossEncoder).

#include <filesystem>
#include <memory>
#include <string>

#include "model/cross_encoder.h"
#include "model/encoder.h"
#include "model/sentence_encoder.h"

namespace kotae {

// `why_not_cuda`, when given, receives the reason the CUDA engine was not used ("" when it was).
Result<std::unique_ptr<Encoder>> load_best_encoder(const std::filesystem::path& model_dir, const EncoderOptions& options = {},
                                                   std::string* why_not_cuda = nullptr);
Result<std::unique_ptr<PairScorer>> load_best_cross_encoder(const std::filesystem::path& model_dir,
                                                            const CrossEncoderOptions& options = {},
                                                            std::string* why_not_cuda = nullptr);

}  // namespace kotae
