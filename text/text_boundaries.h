#pragma once
// Where a text may be cut between two of its tokens, and how good a place that is: the chunker cuts
// at the strongest boundary that fits. Boundaries are found on the tokenizer's byte offsets, so a cut
// always falls between tokens and a chunk never starts or ends with whitespace.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "text/wordpiece_tokenizer.h"

namespace kotae::text {

// Weakest first; a stronger boundary is also every weaker one (a paragraph break ends a sentence).
enum class Boundary : std::uint8_t {
  // Between two tokens of one character, never a cut: normalisation may split a character into
  // several tokens that all span it (NFD turns a Hangul syllable into 2-3 jamo), so no byte offset
  // lies between them.
  inside_character,
  word_piece,  // between two pieces of one word ("token|##ization"): only for words too long to keep
  pre_token,   // inside a whitespace-free run, beside punctuation or a CJK character ("a|/|b")
  word,        // whitespace between the tokens
  line,        // a single line break
  sentence,    // after . ! ? (not after "e.g.", "Dr.", initials) or after 。！？ without a space
  paragraph,   // a blank line
  section,     // a blank line where the heading path changes (set by the caller, who knows segments)
  unit,        // a blank line between two units no chunk spans: a PPTX's slides (set by the caller)
};

// boundaries[j] says how good a cut between token j-1 and token j is, for j in [1, n); boundaries[0]
// and boundaries[n] (the text's edges) are `section`. `tokens` are tokenize(text)'s, in order.
std::vector<Boundary> token_boundaries(std::string_view text, const Encoding& tokens);

// Whether text[0, end) ends a sentence: a sentence mark, perhaps followed by closing quotes or
// brackets, that is not the dot of a common abbreviation or an initial.
bool ends_sentence(std::string_view text, std::size_t end);

}  // namespace kotae::text
