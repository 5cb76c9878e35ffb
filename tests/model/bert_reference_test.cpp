// The native encoder's CPU reference, on the default model's FP16 weights (model.fp16.safetensors,
// which setup derives from the ONNX export), against Kotae's ONNX Runtime encoder on the FP32 graph:
// the same vectors. This also checks the derivation named every weight right. And its cross-encoder
// path (segments, [CLS] pooler, classifier) against Kotae's ONNX CrossEncoder on the random-weight
// test cross-encoders the CTest fixtures write (1 and 2 labels), from the same weights as safetensors.
#include "model/cuda/bert_reference.h"

#include <gtest/gtest.h>

#include "core/paths.h"
#include "model/cross_encoder.h"
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
  auto onnx = (*encoder)->embed(texts, TextRole::passage);
  ASSERT_TRUE(onnx.ok()) << onnx.error().message;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    double cosine = 0;
    for (std::size_t c = 0; c < 384; ++c) cosine += ours[i][c] * onnx->row(i)[c];
    EXPECT_GT(cosine, 0.9999) << texts[i];
  }
}

TEST(BertReference, ScoresPairsAsTheOnnxCrossEncoder) {
  const std::filesystem::path references = KOTAE_CROSS_ENCODER_REFERENCE_DIR;
  const std::string query = "how does sqlite store full text indexes?";
  const std::vector<std::string> passages = {
      "FTS5 is an SQLite virtual table module that provides full-text search functionality.",
      "The quick brown fox jumps over the lazy dog.", "sqlite", "Ünïcödé passage, with 12345 numbers."};
  for (const std::string labels : {"1", "2"}) {
    const auto weights = cuda::load_bert_weights(references / ("model-" + labels) / "model.safetensors", 2);
    ASSERT_TRUE(weights.is_cross_encoder());
    EXPECT_EQ(weights.classifier.out, std::stoi(labels));
    auto onnx = CrossEncoder::load(references / ("model-" + labels));
    ASSERT_TRUE(onnx.ok()) << onnx.error().message;
    std::vector<text::Encoding> encoded;
    std::vector<cuda::PairTokens> pairs;
    for (const auto& passage : passages) {
      encoded.push_back((*onnx)->encode(query, passage));
      pairs.push_back({{encoded.back().ids.begin(), encoded.back().ids.end()},
                       {encoded.back().type_ids.begin(), encoded.back().type_ids.end()}});
    }
    const auto expected = (*onnx)->score_encoded(encoded);
    ASSERT_TRUE(expected.ok()) << expected.error().message;
    const auto ours = cuda::bert_reference_score(weights, pairs);
    ASSERT_EQ(ours.size(), passages.size());
    for (std::size_t i = 0; i < passages.size(); ++i) {
      EXPECT_NEAR(ours[i], (*expected)[i], 1e-3 * (1 + std::abs((*expected)[i])))
          << labels << " labels: " << passages[i];
    }
  }
  // An encoder without a classifier head cannot score.
  const auto encoder =
      cuda::load_bert_weights(models_dir(default_data_dir()) / "all-minilm-l6-v2/model.fp16.safetensors", 12);
  EXPECT_FALSE(encoder.is_cross_encoder());
  EXPECT_THROW(cuda::bert_reference_score(encoder, {{{101, 102}, {0, 0}}}), std::invalid_argument);
}

TEST(BertReference, RefusesAMissingFile) {
  EXPECT_THROW(cuda::load_bert_weights("/nonexistent/model.safetensors", 12), std::runtime_error);
}

}  // namespace
}  // namespace kotae
