#pragma once
// The fastest encoder this machine runs a model on: the native CUDA encoder where a GPU, its plugin
// and the model's FP16 weights are, else ONNX Runtime (SentenceEncoder). KOTAE_ENCODER=onnx keeps to
// ONNX Runtime; KOTAE_ENCODER=cuda makes a CUDA failure an error instead of a fallback.

#include <filesystem>
#include <memory>
#include <string>

#include "model/encoder.h"
#include "model/sentence_encoder.h"

namespace kotae {

// `why_not_cuda`, when given, receives the reason the CUDA encoder was not used ("" when it was).
Result<std::unique_ptr<Encoder>> load_best_encoder(const std::filesystem::path& model_dir, const EncoderOptions& options = {},
                                                   std::string* why_not_cuda = nullptr);

}  // namespace kotae
