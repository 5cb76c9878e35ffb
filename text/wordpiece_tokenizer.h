#pragma once
// BERT WordPiece tokenizer loaded from a Hugging Face tokenizer.json (or a vocab.txt): normalisation,
// punctuation splitting, greedy longest-match WordPiece, [CLS]/[SEP] templates for single texts and
// pairs, `longest_first` truncation, and byte offsets into the caller's text for every token.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/result.h"
#include "text/bert_normalizer.h"
#include "text/tokenizer.h"

namespace kotae::text {

// How a pair that is too long is cut (Hugging Face's truncation strategies).
enum class PairTruncation {
  longest_first,  // shorten the longer text first, then both evenly (encode_pair's default)
  // Cut only the second text; when the first alone leaves it no token, fall back to longest_first
  // (where Hugging Face would raise). Rerankers keep the query whole and cut the passage.
  only_second,
};

struct WordPieceOptions {
  BertNormalizerOptions normalizer;
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string continuing_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  // Literal tokens matched in the raw text before normalisation, as Hugging Face's non-normalised
  // added tokens are: "[CLS]" typed in a document is the [CLS] token, not "[", "cls", "]".
  std::vector<std::string> added_tokens;
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  static Result<WordPieceTokenizer> from_tokenizer_json(const std::filesystem::path& path);
  static Result<WordPieceTokenizer> from_vocab_txt(const std::filesystem::path& path, WordPieceOptions options = {});

  // max_length counts the special tokens; 0 means no truncation.
  Encoding encode(std::string_view text, std::size_t max_length = 0) const override;
  Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length = 0) const override;
  Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length, PairTruncation truncation) const;

  // Token ids of the text alone: no special tokens, no truncation (used to count tokens).
  Encoding tokenize(std::string_view text) const override;
  // At least the first `needed` tokens of the text (all of them when it has fewer), from only about the
  // bytes they come from: a long text is cut before it is tokenized, not after.
  Encoding tokenize_prefix(std::string_view text, std::size_t needed) const;

  std::size_t vocab_size() const override { return vocab_.size(); }
  const std::string& token_text(std::int32_t id) const override;
  std::int32_t pad_id() const { return pad_id_; }
  // The id of a token, or -1 when the vocabulary lacks it.
  std::int32_t token_id(std::string_view token) const;

 private:
  WordPieceTokenizer(std::unordered_map<std::string, std::int32_t> vocab, WordPieceOptions options);
  Result<void> resolve_special_tokens();
  void word_pieces(const NormalizedText& text, std::size_t first, std::size_t last, Encoding& out) const;
  // Normalises, splits and word-pieces input[begin, end), appending to out with offsets into input.
  void tokenize_span(std::string_view input, std::size_t begin, std::size_t end, Encoding& out) const;
  // Length of the longest added token at input[pos], 0 if none; its id in `id`.
  std::size_t match_added_token(std::string_view input, std::size_t pos, std::int32_t& id) const;

  std::unordered_map<std::string, std::int32_t> vocab_;
  std::vector<std::string> tokens_;  // vocab_ the other way: id -> entry
  WordPieceOptions options_;
  std::int32_t unk_id_ = -1, cls_id_ = -1, sep_id_ = -1, pad_id_ = 0;
  std::vector<std::pair<std::string, std::int32_t>> added_;  // resolved options_.added_tokens
  std::array<bool, 256> added_first_byte_{};                 // bytes an added token can start with
  std::size_t longest_token_chars_ = 0;                      // code points of the longest vocabulary entry
};

}  // namespace kotae::text
