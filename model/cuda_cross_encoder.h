#pragma once
// A BERT cross-encoder on the native CUDA kernels (model/cuda: the encoder, then the [CLS] row through
// the pooler and the classifier), behind the same PairScorer interface as the ONNX CrossEncoder, whose
// scores it gives within FP16 precision (the logit, or logit[1] - logit[0] for two labels). Needs a GPU,
// the plugin, and the model's weights as safetensors listed in its manifest (role "safetensors-fp16"
// or "safetensors"; Hugging Face's names) with its "heads". Pairs are cut where the ONNX CrossEncoder
// cuts them (the manifest's max_length, query kept whole), so both read the same tokens.

#include <filesystem>
#include <memory>
#include <string>

#include "model/cuda_plugin.h"
#include "model/model_manifest.h"
#include "model/reranker.h"

namespace kotae {

class CudaCrossEncoder final : public PairScorer {
 public:
  static Result<std::unique_ptr<CudaCrossEncoder>> load(
      const std::filesystem::path& model_dir, const std::filesystem::path& plugin = default_cuda_encoder_plugin());
  ~CudaCrossEncoder() override;

  std::string id() const override { return manifest_.name + "/" + manifest_.precision; }
  text::Encoding encode(std::string_view query, std::string_view passage) const override;
  Result<std::vector<float>> score_encoded(std::span<const text::Encoding> pairs) const override;
  const std::string& provider() const override { return provider_; }

 private:
  CudaCrossEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                   std::unique_ptr<CudaEncoderPlugin> plugin);

  ModelManifest manifest_;
  text::WordPieceTokenizer tokenizer_;
  std::unique_ptr<CudaEncoderPlugin> plugin_;
  std::string provider_;
};

}  // namespace kotae
