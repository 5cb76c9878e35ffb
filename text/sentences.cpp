#include "text/sentences.h"

#include "text/text_boundaries.h"

namespace kotae::text {
namespace {

// A wrapped line goes on in lower case; a new heading, list item or sentence does not.
bool continues_line(std::string_view text, std::size_t next_token_begin) {
  const char c = text[next_token_begin];
  return c >= 'a' && c <= 'z';
}

}  // namespace

std::vector<SentenceSpan> sentence_spans(std::string_view text, const Encoding& tokens) {
  std::vector<SentenceSpan> out;
  const std::size_t n = tokens.size();
  if (n == 0) return out;
  const std::vector<Boundary> boundaries = token_boundaries(text, tokens);
  std::size_t first = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    const bool cut = j == n || boundaries[j] >= Boundary::sentence ||
                     (boundaries[j] == Boundary::line && !continues_line(text, tokens.offsets[j].first));
    if (!cut) continue;
    out.push_back({tokens.offsets[first].first, tokens.offsets[j - 1].second, first, j});
    first = j;
  }
  return out;
}

}  // namespace kotae::text
