#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/sentence_encoder.h"
#include "store/sentence_vectors.h"
#include "support/test_data.h"
#include "text/sentences.h"

namespace kotae {
namespace {

TEST(SentenceVectors, RoundTripThroughTheirStoredForm) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<store::SentenceVector> sentences(3);
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    sentences[i].begin = static_cast<std::uint32_t>(10 * i);
    sentences[i].end = static_cast<std::uint32_t>(10 * i + 7);
    sentences[i].vector.resize(384);
    double norm = 0;
    for (auto& x : sentences[i].vector) {
      x = normal(rng);
      norm += double(x) * x;
    }
    for (auto& x : sentences[i].vector) x = static_cast<float>(x / std::sqrt(norm));
  }
  const auto blob = store::encode_sentence_vectors(sentences, 384);
  EXPECT_EQ(blob.size(), 4u + 3u * (12u + 384u));  // a quarter of the floats, plus spans and scales
  auto back = store::decode_sentence_vectors(blob, 384);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*back)[i].begin, sentences[i].begin);
    EXPECT_EQ((*back)[i].end, sentences[i].end);
    double cosine = 0;
    for (std::size_t h = 0; h < 384; ++h) cosine += double((*back)[i].vector[h]) * sentences[i].vector[h];
    EXPECT_GT(cosine, 0.999);
  }
  EXPECT_TRUE(store::decode_sentence_vectors({}, 384)->empty());
  std::vector<std::byte> cut(blob.begin(), blob.end() - 1);
  EXPECT_EQ(store::decode_sentence_vectors(cut, 384).error().code, ErrorCode::corrupt);
}

class SentenceSpansTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    EncoderOptions options;
    options.warm_up = false;
    auto loaded = SentenceEncoder::load(testing::model_dir(kDefaultEmbeddingModel), options);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    encoder_ = std::move(*loaded).release();
  }
  static void TearDownTestSuite() { delete encoder_; }
  static inline SentenceEncoder* encoder_ = nullptr;
};

TEST_F(SentenceSpansTest, EndAtSentenceMarksAndAtLinesThatStartSomethingNew) {
  const std::string text = "Debian 12\nIt is stable. Dr. Smith said so! Is it? yes, and this\nwrapped line goes on.";
  const auto tokens = encoder_->tokenizer().tokenize(text);
  std::vector<std::string> sentences;
  for (const auto& s : text::sentence_spans(text, tokens)) {
    sentences.push_back(text.substr(s.begin, s.end - s.begin));
    EXPECT_EQ(tokens.offsets[s.first_token].first, s.begin);
    EXPECT_EQ(tokens.offsets[s.last_token - 1].second, s.end);
  }
  EXPECT_EQ(sentences, (std::vector<std::string>{"Debian 12", "It is stable.", "Dr. Smith said so!", "Is it?",
                                                 "yes, and this\nwrapped line goes on."}));
}

// A PDF wraps lines anywhere: a line that opens with a bracket, a quote or a number, or that
// follows a comma or a word like "as", goes on with the sentence; a heading or a list item does not.
TEST_F(SentenceSpansTest, WrappedLinesGoOnWhateverTheyStartWith) {
  const std::string text =
      "Websites\nSQLite works great for most low to medium traffic websites\n(which is to say, most websites). "
      "Engines such as MySQL,\nOracle, or SQL Server serve about\n400K requests a day, of which\n"
      "\"dynamic\" pages are a fifth. Choose one:\n- Oracle\n2) PostgreSQL";
  const auto tokens = encoder_->tokenizer().tokenize(text);
  std::vector<std::string> sentences;
  for (const auto& s : text::sentence_spans(text, tokens)) sentences.push_back(text.substr(s.begin, s.end - s.begin));
  EXPECT_EQ(
      sentences,
      (std::vector<std::string>{
          "Websites", "SQLite works great for most low to medium traffic websites\n(which is to say, most websites).",
          "Engines such as MySQL,\nOracle, or SQL Server serve about\n400K requests a day, of which\n"
          "\"dynamic\" pages are a fifth.",
          "Choose one:", "- Oracle", "2) PostgreSQL"}));
}

TEST_F(SentenceSpansTest, PooledRangesAgreeWithTheWholeInputAndWithTheSentenceAlone) {
  const std::string chunk =
      "The kernel schedules processes on the CPU. Bread dough must rise for an hour before baking.";
  const text::Encoding tokens = encoder_->tokenize(chunk);
  const std::size_t n = tokens.size();
  // [CLS] The kernel ... CPU. | Bread dough ... baking. [SEP]
  std::size_t split = 1;
  while (tokens.offsets[split].first < chunk.find("Bread")) ++split;
  const std::vector<std::vector<TokenRange>> ranges = {{{0, n}, {1, split}, {split, n - 1}}};
  auto pooled = encoder_->embed_encoded_with_ranges(std::span(&tokens, 1), ranges);
  ASSERT_TRUE(pooled.ok()) << pooled.error().message;
  ASSERT_EQ(pooled->ranges.size(), 3u);
  auto cosine = [](std::span<const float> a, std::span<const float> b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
    return s;
  };
  // The range over every token is the input's own vector.
  EXPECT_GT(cosine(pooled->ranges.row(0), pooled->inputs.row(0)), 0.99999);
  // Each sentence's pooled vector is closest to that sentence embedded on its own.
  const std::vector<std::string> alone = {"The kernel schedules processes on the CPU.",
                                          "Bread dough must rise for an hour before baking."};
  auto separate = encoder_->embed(alone, TextRole::passage);
  ASSERT_TRUE(separate.ok());
  EXPECT_GT(cosine(pooled->ranges.row(1), separate->row(0)), cosine(pooled->ranges.row(1), separate->row(1)) + 0.1);
  EXPECT_GT(cosine(pooled->ranges.row(2), separate->row(1)), cosine(pooled->ranges.row(2), separate->row(0)) + 0.1);

  const std::vector<std::vector<TokenRange>> outside = {{{2, n + 1}}};
  EXPECT_EQ(encoder_->embed_encoded_with_ranges(std::span(&tokens, 1), outside).error().code,
            ErrorCode::invalid_argument);
}

}  // namespace
}  // namespace kotae
