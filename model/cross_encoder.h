#pragma once
// A Hugging Face cross-encoder (BERT-style sequence classifier) exported to ONNX: each (query,
// passage) pair is encoded as [CLS] query [SEP] passage [SEP] and the model reads both at once, which
// ranks far better than comparing two separately computed vectors. See docs/reranker.md for export.
//
// Truncation is by tokens, never by characters: the query stays whole and only the passage is cut
// (Hugging Face's `only_second`); a query that alone leaves no room for the passage falls back to
// `longest_first`. Pairs are sorted by length and cut into sub-batches, so padding stays small.
//
// Scores are raw logits; no sigmoid is applied. That is what the ms-marco cross-encoders declare
// (activation Identity) and print on their model cards; sentence-transformers' own default for a
// one-label model that declares nothing is a sigmoid (0..1). Either ranks identically. An output of
// [batch, 1] gives its one logit; [batch, 2] (a binary classifier) gives logit[1] - logit[0], the
// log-odds of the last ("relevant") label, which ranks as its softmax probability would (the last
// column alone would not). The model is verified against its manifest (kind "reranker") before ONNX
// Runtime reads it, and warmed up at load.

#include <filesystem>
#include <memory>

#include "model/model_manifest.h"
#include "model/onnx_session.h"
#include "model/reranker.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

struct CrossEncoderOptions {
  OnnxSessionOptions session;
  bool warm_up = true;
  std::size_t max_batch_items = 32;  // pairs per model run
  // Pairs x padded length per model run. Lower than an encoder's: attention scores grow with the
  // square of the length, and reranked pairs are long (16 x 512 tokens stays near 200 MB for 12 heads).
  std::size_t max_batch_tokens = 8192;
};

class CrossEncoder final : public PairScorer {
 public:
  static Result<std::unique_ptr<CrossEncoder>> load(const std::filesystem::path& model_dir,
                                                    const CrossEncoderOptions& options = {});

  std::string id() const override { return manifest_.name + "/" + manifest_.precision; }

  // The pair as the model sees it, truncated to the manifest's max_length as described above.
  text::Encoding encode(std::string_view query, std::string_view passage) const override;
  std::size_t max_pair_tokens() const override { return static_cast<std::size_t>(manifest_.max_length); }
  std::size_t untruncated_pair_tokens(std::string_view query, std::string_view passage) const override;
  Result<std::vector<float>> score_encoded(std::span<const text::Encoding> pairs) const override;

  const std::string& provider() const override { return session_->provider(); }
  const ModelManifest& manifest() const { return manifest_; }

 private:
  CrossEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer, std::unique_ptr<OnnxSession> session,
               std::string onnx_file, CrossEncoderOptions options);
  Result<void> run_batch(std::span<const text::Encoding* const> rows, std::span<float* const> scores) const;

  ModelManifest manifest_;
  text::WordPieceTokenizer tokenizer_;
  std::unique_ptr<OnnxSession> session_;
  std::string onnx_file_;  // for error messages
  CrossEncoderOptions options_;
};

}  // namespace kotae
