#pragma once
// A text's sentences, found on its tokens: a sentence ends where the chunker would see a sentence
// (or stronger) boundary, or at a line break before a line that does not continue the sentence (a
// heading, a list item). PDFs wrap lines anywhere, so a line going on in lower case, with a bracket
// or a number, or after a comma or a word like "as", continues the sentence. Each sentence knows both its bytes and its
// tokens, so a vector can be pooled from exactly its tokens and a citation can point at exactly its bytes.

#include <cstddef>
#include <string_view>
#include <vector>

#include "text/wordpiece_tokenizer.h"

namespace kotae::text {

struct SentenceSpan {
  std::size_t begin = 0, end = 0;               // bytes of the text, no surrounding whitespace
  std::size_t first_token = 0, last_token = 0;  // [first, last) indices into `tokens`
};

// `tokens` are those of `text` as WordPieceTokenizer::tokenize gives them (no special tokens).
std::vector<SentenceSpan> sentence_spans(std::string_view text, const Encoding& tokens);

}  // namespace kotae::text
