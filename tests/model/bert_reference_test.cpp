// The native encoder's CPU reference, on the default model's FP16 weights (model.fp16.safetensors,
// which setup derives from the ONNX export), against Kotae's ONNX Runtime encoder on the FP32 graph:
// the same vectors. This also checks the derivation named every weight right.
#include "model/cuda/bert_reference.h"

#include <gtest/gtest.h>

#include "core/paths.h"
#include "model/sentence_encoder.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {
namespace {

TEST(BertReference, MatchesTheOnnxEncoder) {
  const auto model_dir = models_dir(default_data_dir()) / "all-minilm-l6-v2";
  const auto weights = cuda::load_bert_weights(model_dir / "model.fp16.safetensors", 12);
  ASSERT_EQ(weights.layers.size(), 6u);
  EXPECT_EQ(weights.hidden, 384);
  auto tokenizer = text::WordPieceTokenizer::from_tokenizer_json(model_dir / "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  auto encoder = SentenceEncoder::load(model_dir);
  ASSERT_TRUE(encoder.ok()) << encoder.error().message;
  const std::vector<std::string> texts = {"How do I create an AUTOINCREMENT field?", "Is SQLite threadsafe?",
                                          "SQLite is not directly comparable to client/server SQL database engines.",
                                          "Ünïcödé text, numbers 12345 and punctuation!?"};
  std::vector<std::vector<int>> ids;
  for (const auto& t : texts) {
    const auto e = tokenizer->encode(t, 256);
    ids.emplace_back(e.ids.begin(), e.ids.end());
  }
  const auto ours = cuda::bert_reference_embed(weights, ids);
  auto onnx = (*encoder)->embed(texts);
  ASSERT_TRUE(onnx.ok()) << onnx.error().message;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    double cosine = 0;
    for (std::size_t c = 0; c < 384; ++c) cosine += ours[i][c] * onnx->row(i)[c];
    EXPECT_GT(cosine, 0.9999) << texts[i];
  }
}

TEST(BertReference, RefusesAMissingFile) {
  EXPECT_THROW(cuda::load_bert_weights("/nonexistent/model.safetensors", 12), std::runtime_error);
}

}  // namespace
}  // namespace kotae
