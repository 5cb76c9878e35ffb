#include <gtest/gtest.h>

#include "support/test_data.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae::text {
namespace {

class WordPieceTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = WordPieceTokenizer::from_tokenizer_json(testing::model_dir("all-minilm-l6-v2") / "tokenizer.json");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    tokenizer_ = new WordPieceTokenizer(std::move(*loaded));
  }
  static void TearDownTestSuite() { delete tokenizer_; }
  static WordPieceTokenizer* tokenizer_;
};
WordPieceTokenizer* WordPieceTokenizerTest::tokenizer_ = nullptr;

using Offsets = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

TEST_F(WordPieceTokenizerTest, EncodesWithSpecialTokensAndByteOffsets) {
  const Encoding e = tokenizer_->encode("Hello, world!");
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{101, 7592, 1010, 2088, 999, 102}));
  EXPECT_EQ(e.offsets, (Offsets{{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}}));
  EXPECT_EQ(e.special_tokens_mask, (std::vector<std::uint8_t>{1, 0, 0, 0, 0, 1}));
}

TEST_F(WordPieceTokenizerTest, SplitsUnknownWordsIntoPieces) {
  const Encoding e = tokenizer_->tokenize("tokenization");
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{19204, 3989}));  // "token", "##ization"
  EXPECT_EQ(e.offsets, (Offsets{{0, 5}, {5, 12}}));
}

TEST_F(WordPieceTokenizerTest, StripsAccentsLowercasesAndKeepsOriginalOffsets) {
  const Encoding accented = tokenizer_->tokenize("Café");
  const Encoding plain = tokenizer_->tokenize("cafe");
  EXPECT_EQ(accented.ids, plain.ids);
  EXPECT_EQ(accented.offsets.back().second, 5u);  // "é" is two bytes in the input
}

TEST_F(WordPieceTokenizerTest, SurroundsChineseCharactersWithSpaces) {
  const Encoding e = tokenizer_->tokenize("中文");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e.offsets, (Offsets{{0, 3}, {3, 6}}));
}

TEST_F(WordPieceTokenizerTest, DropsControlCharactersAndSurvivesInvalidUtf8) {
  EXPECT_EQ(tokenizer_
                ->tokenize("a\x01"
                           "b")
                .ids,
            tokenizer_->tokenize("ab").ids);
  const Encoding e = tokenizer_->tokenize(std::string("ok \xff\xfe ok"));
  EXPECT_EQ(e.ids, tokenizer_->tokenize("ok ok").ids);
  EXPECT_EQ(tokenizer_->encode("").ids, (std::vector<std::int32_t>{101, 102}));
}

TEST_F(WordPieceTokenizerTest, OverlongWordBecomesUnknown) {
  const Encoding e = tokenizer_->tokenize(std::string(101, 'a'));
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{100}));
}

TEST_F(WordPieceTokenizerTest, TruncatesSingleTextsToMaxLength) {
  const Encoding e = tokenizer_->encode("one two three four five six", 5);
  EXPECT_EQ(e.size(), 5u);
  EXPECT_EQ(e.ids.front(), 101);
  EXPECT_EQ(e.ids.back(), 102);
}

// A long text is cut before it is tokenized: the tokens of the cut agree with those of the whole text
// cut after tokenizing, whatever the text's words and spacing (a 64 KiB input costs what 256 tokens do).
TEST_F(WordPieceTokenizerTest, TruncationBeforeTokenizingKeepsTheSameTokens) {
  std::string text;
  const char* words[] = {"Lighthouse", "keepers", "Café", "naïve",  "東京", "tokenization",
                         "\t",         "\n\n",    "x",    "[MASK]", "   "};
  for (int i = 0; i < 12000; ++i) text += std::string(words[(i * 7) % 11]) + ((i % 5) ? " " : "  ");
  for (const std::size_t max_length : {8u, 128u, 256u, 512u, 4000u}) {
    const Encoding cut = tokenizer_->encode(text, max_length);
    const Encoding whole = tokenizer_->tokenize(text);
    ASSERT_EQ(cut.size(), std::min(max_length, whole.size() + 2));
    for (std::size_t i = 1; i + 1 < cut.size(); ++i) {
      ASSERT_EQ(cut.ids[i], whole.ids[i - 1]) << "token " << i << " at max_length " << max_length;
      ASSERT_EQ(cut.offsets[i], whole.offsets[i - 1]) << "token " << i << " at max_length " << max_length;
    }
  }
  const Encoding one_word = tokenizer_->encode(std::string(70000, 'a'), 256);  // no white space to cut at
  EXPECT_EQ(one_word.size(), 3u);
}

TEST_F(WordPieceTokenizerTest, PairTruncationShortensTheLongerTextFirst) {
  // 2 + 10 words, budget 10 - 3 = 7: the short text keeps 2, the long one 5.
  const Encoding e = tokenizer_->encode_pair("short text", "a b c d e f g h i j", 10);
  ASSERT_EQ(e.size(), 10u);
  EXPECT_EQ(std::count(e.type_ids.begin(), e.type_ids.end(), 0), 4);  // [CLS] short text [SEP]
  EXPECT_EQ(std::count(e.type_ids.begin(), e.type_ids.end(), 1), 6);  // 5 words + [SEP]
  // Both long: each keeps half of the budget.
  const Encoding both = tokenizer_->encode_pair("a b c d e f g h", "a b c d e f g h", 11);
  EXPECT_EQ(std::count(both.type_ids.begin(), both.type_ids.end(), 0), 6);
  EXPECT_EQ(std::count(both.type_ids.begin(), both.type_ids.end(), 1), 5);
}

}  // namespace
}  // namespace kotae::text
