#pragma once
// An Encoder whose embed_encoded goes through an EncoderBatcher: code written against Encoder (the
// retriever, the answer pipeline) shares batches with every other concurrent request without knowing
// it. Pooling token ranges (ingestion's sentence vectors) runs the model directly: the batcher carries
// whole-input vectors only.

#include <memory>

#include "batch/encoder_batcher.h"

namespace kotae::batch {

class BatchedEncoder final : public Encoder {
 public:
  BatchedEncoder(std::shared_ptr<const Encoder> encoder, std::shared_ptr<EncoderBatcher> batcher,
                 Priority priority = Priority::interactive)
      : encoder_(std::move(encoder)), batcher_(std::move(batcher)), priority_(priority) {}

  std::size_t dimension() const override { return encoder_->dimension(); }
  std::string id() const override { return encoder_->id(); }
  std::string precision() const override { return encoder_->precision(); }
  const std::string& provider() const override { return encoder_->provider(); }
  text::Encoding tokenize(std::string_view text) const override { return encoder_->tokenize(text); }
  const TextPrefixes& prefixes() const override { return encoder_->prefixes(); }
  const text::Tokenizer& tokenizer() const override { return encoder_->tokenizer(); }
  std::size_t max_length() const override { return encoder_->max_length(); }
  Result<Embeddings> embed_encoded(std::span<const text::Encoding> encodings) const override;
  void embed_encoded_async(std::vector<text::Encoding> encodings, EmbeddingsDone done) const override;
  Result<RangeEmbeddings> embed_encoded_with_ranges(std::span<const text::Encoding> encodings,
                                                    std::span<const std::vector<TokenRange>> ranges) const override {
    return encoder_->embed_encoded_with_ranges(encodings, ranges);
  }
  Result<Embeddings> embed_encoded_unnormalized(std::span<const text::Encoding> encodings) const override {
    return encoder_->embed_encoded_unnormalized(encodings);  // rare (TEI's normalize: false): not batched
  }

  const EncoderBatcher& batcher() const { return *batcher_; }

 private:
  std::shared_ptr<const Encoder> encoder_;
  std::shared_ptr<EncoderBatcher> batcher_;
  Priority priority_;
};

}  // namespace kotae::batch
