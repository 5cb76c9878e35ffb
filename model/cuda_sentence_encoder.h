#pragma once
// The default embedding model on the native CUDA encoder (model/cuda), behind the same Encoder
// interface as the ONNX one: Kotae's tokenizer in front, the kernels in libkotae_cuda_encoder.so,
// which is opened at run time only, so the kotae binary runs where CUDA is not installed. load()
// says why it cannot run (no plugin, no GPU, no FP16 weights); callers then use SentenceEncoder.

#include <filesystem>
#include <memory>
#include <string>

#include "model/cuda_plugin.h"
#include "model/encoder.h"
#include "model/model_manifest.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

class CudaSentenceEncoder final : public Encoder {
 public:
  static Result<std::unique_ptr<CudaSentenceEncoder>> load(
      const std::filesystem::path& model_dir, const std::filesystem::path& plugin = default_cuda_encoder_plugin());
  ~CudaSentenceEncoder() override;

  std::size_t dimension() const override { return static_cast<std::size_t>(manifest_.dimension); }
  // The same model as the ONNX encoder's, within FP16 precision (cosine 0.9999997): one id, so
  // collections are shared between CPU and GPU machines.
  std::string id() const override { return manifest_.name + "/" + manifest_.precision; }
  std::string precision() const override { return "fp16"; }
  const std::string& provider() const override { return provider_; }
  text::Encoding tokenize(std::string_view text) const override;
  const TextPrefixes& prefixes() const override { return prefixes_; }
  const text::Tokenizer& tokenizer() const override { return tokenizer_; }
  std::size_t max_length() const override { return static_cast<std::size_t>(manifest_.max_length); }
  Result<Embeddings> embed_encoded(std::span<const text::Encoding> encodings) const override;
  Result<RangeEmbeddings> embed_encoded_with_ranges(std::span<const text::Encoding> encodings,
                                                    std::span<const std::vector<TokenRange>> ranges) const override;

 private:
  CudaSentenceEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                      std::unique_ptr<CudaEncoderPlugin> plugin);
  Result<void> run(std::span<const text::Encoding> encodings, float* vectors, std::vector<float>* states) const;

  ModelManifest manifest_;
  TextPrefixes prefixes_;
  text::WordPieceTokenizer tokenizer_;
  std::unique_ptr<CudaEncoderPlugin> plugin_;
  std::string provider_;
};

}  // namespace kotae
