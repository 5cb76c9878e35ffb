#pragma once
// A BERT-style ONNX sentence encoder: tokenise, run, pool (mean or CLS, as the manifest says),
// L2-normalise. Inputs are sorted by length and cut into sub-batches so padding stays small. The
// model is verified against its manifest before ONNX Runtime reads it, and warmed up at load.

#include <filesystem>
#include <memory>

#include "model/encoder.h"
#include "model/model_manifest.h"
#include "model/onnx_session.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

struct EncoderOptions {
  OnnxSessionOptions session;
  // fp32 runs the manifest's "onnx" file; fp16 its "onnx-fp16" variant (for GPUs with tensor cores;
  // see `kotae doctor`'s precision advice); int8 its "onnx-int8" one (static INT8, for CPUs with VNNI).
  // All three are the same model, so they share its id and its collections.
  enum class Precision { fp32, fp16, int8 } precision = Precision::fp32;
  bool warm_up = true;
  std::size_t max_batch_items = 64;      // rows per model run
  std::size_t max_batch_tokens = 16384;  // rows x padded length per model run
  // A run also closes when the next (shorter) text is below this fraction of the run's longest: less
  // padding, and for int8 models, whose activations are quantised with one scale per batch, texts
  // share a scale only with texts of similar length.
  double min_length_ratio = 0.75;
};

class SentenceEncoder final : public Encoder {
 public:
  static Result<std::unique_ptr<SentenceEncoder>> load(const std::filesystem::path& model_dir,
                                                       const EncoderOptions& options = {});

  std::size_t dimension() const override { return static_cast<std::size_t>(manifest_.dimension); }
  std::string id() const override { return manifest_.name + "/" + manifest_.precision; }
  std::string precision() const override;
  const std::string& provider() const override { return session_->provider(); }
  text::Encoding tokenize(std::string_view text) const override;
  const TextPrefixes& prefixes() const override { return prefixes_; }
  const text::Tokenizer& tokenizer() const override { return tokenizer_; }
  std::size_t max_length() const override { return static_cast<std::size_t>(manifest_.max_length); }
  Result<Embeddings> embed_encoded(std::span<const text::Encoding> encodings) const override;
  Result<Embeddings> embed_encoded_unnormalized(std::span<const text::Encoding> encodings) const override;
  // Mean-pooling models only.
  Result<RangeEmbeddings> embed_encoded_with_ranges(std::span<const text::Encoding> encodings,
                                                    std::span<const std::vector<TokenRange>> ranges) const override;

  const ModelManifest& manifest() const { return manifest_; }
  const std::vector<std::string>& skipped_providers() const { return session_->skipped_providers(); }

 private:
  SentenceEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer, std::unique_ptr<OnnxSession> session,
                  EncoderOptions options);
  // Where one input's vectors go: its own, and (when ranges is not null) one per range.
  struct PoolTarget {
    float* output = nullptr;
    const std::vector<TokenRange>* ranges = nullptr;
    float* range_outputs = nullptr;
    bool unnormalized = false;  // the pooled vector as it is, not scaled to unit length
  };
  Result<void> embed_into(std::span<const text::Encoding> encodings, std::span<const PoolTarget> targets) const;
  Result<void> run_batch(std::span<const text::Encoding* const> rows, std::span<const PoolTarget> targets) const;

  ModelManifest manifest_;
  TextPrefixes prefixes_;
  text::WordPieceTokenizer tokenizer_;
  std::unique_ptr<OnnxSession> session_;
  EncoderOptions options_;
};

}  // namespace kotae
