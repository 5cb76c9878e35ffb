#pragma once
// What the rest of Kotae needs of a model's tokenizer: token ids with each token's bytes in the text,
// with the model's special tokens (what the model reads) or without (counting, chunking). WordPiece
// (text/wordpiece_tokenizer.h) is the one the encoders use today.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kotae::text {

struct Encoding {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  // Byte span of each token in the text it came from (text A or, where type_ids is 1, text B);
  // {0, 0} for special tokens.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  std::vector<std::uint8_t> special_tokens_mask;

  std::size_t size() const { return ids.size(); }
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Special tokens added; max_length counts them, 0 means no truncation.
  virtual Encoding encode(std::string_view text, std::size_t max_length) const = 0;
  virtual Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length) const = 0;
  // Token ids of the text alone: no special tokens, no truncation (used to count tokens).
  virtual Encoding tokenize(std::string_view text) const = 0;
  virtual std::size_t vocab_size() const = 0;
  // The vocabulary entry of a token id ("[CLS]", "##ing"); empty for an id outside it.
  virtual const std::string& token_text(std::int32_t id) const = 0;
};

}  // namespace kotae::text
