#include "text/text_boundaries.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/assert.h"
#include "text/unicode.h"

namespace kotae::text {
namespace {

bool is_ascii_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

bool ends_with(std::string_view text, std::size_t end, std::string_view suffix) {
  return end >= suffix.size() && text.substr(end - suffix.size(), suffix.size()) == suffix;
}

// Closing marks that may follow a sentence's full stop: `He said "no."` ends after the quote.
constexpr std::array<std::string_view, 11> kClosers = {")",      "]",      "}",      "\"",     "'",     "\u201D",
                                                       "\u2019", "\u00BB", "\u300D", "\u300F", "\uFF09"};

// Ideographic sentence marks; they end a sentence even with no space after them.
constexpr std::array<std::string_view, 4> kCjkEnders = {"\u3002", "\uFF01", "\uFF1F", "\uFF0E"};

// Words whose dot is no full stop. Kept short: a missed abbreviation costs one early cut, and a
// listed word that does end a sentence only loses a sentence boundary, not correctness.
constexpr std::array<std::string_view, 20> kAbbreviations = {"e.g.", "i.e.",    "dr.", "mr.",   "mrs.", "ms.",  "prof.",
                                                             "st.",  "jr.",     "sr.", "vs.",   "cf.",  "fig.", "figs.",
                                                             "vol.", "approx.", "al.", "resp.", "ca.",  "viz."};

std::size_t skip_closers(std::string_view text, std::size_t end) {
  for (int skipped = 0; skipped < 3; ++skipped) {
    const auto closer =
        std::find_if(kClosers.begin(), kClosers.end(), [&](std::string_view c) { return ends_with(text, end, c); });
    if (closer == kClosers.end()) break;
    end -= closer->size();
  }
  return end;
}

bool ends_with_cjk_mark(std::string_view text, std::size_t end) {
  return std::any_of(kCjkEnders.begin(), kCjkEnders.end(), [&](std::string_view m) { return ends_with(text, end, m); });
}

// Whether the word ending in a dot at text[.., end) is an abbreviation or an initial.
bool is_abbreviation(std::string_view text, std::size_t end) {
  constexpr std::size_t kLongest = 12;  // longer words are never abbreviations here
  std::size_t begin = end;
  while (begin > 0 && end - begin < kLongest && !is_ascii_space(text[begin - 1])) --begin;
  if (begin > 0 && !is_ascii_space(text[begin - 1])) return false;
  while (begin < end && (text[begin] == '(' || text[begin] == '"' || text[begin] == '\'')) ++begin;
  std::string word(text.substr(begin, end - begin));
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::find(kAbbreviations.begin(), kAbbreviations.end(), word) != kAbbreviations.end()) return true;
  const auto is_letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  // An initial ("J. Smith") or a dotted acronym ("U.S.", "e.g." spelt otherwise): a lone letter
  // between dots.
  const std::size_t n = word.size();
  return n >= 2 && is_letter(word[n - 2]) && (n == 2 || word[n - 3] == '.');
}

// The code point that ends at text[end) (UTF-8 is self-synchronising: back up over continuation bytes).
char32_t code_point_before(std::string_view text, std::size_t end) {
  std::size_t pos = end - 1;
  while (pos > 0 && end - pos < 4 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) --pos;
  return decode_utf8(text, pos);
}

// BERT's pre-tokeniser makes every punctuation mark and CJK character a word of its own, so a cut
// beside one tokenises the same on both sides.
bool splits_words(char32_t c) {
  return is_punctuation(c) || is_chinese_char(c);
}

// Whether tokens j-1 and j, with no whitespace between them, are separate pre-tokeniser words.
bool splits_words(const Encoding& tokens, std::size_t j, std::string_view text) {
  if (tokens.special_tokens_mask[j - 1] || tokens.special_tokens_mask[j]) return true;  // added tokens
  std::size_t next = tokens.offsets[j].first;
  return splits_words(code_point_before(text, tokens.offsets[j - 1].second)) || splits_words(decode_utf8(text, next));
}

}  // namespace

bool ends_sentence(std::string_view text, std::size_t end) {
  end = skip_closers(text, end);
  if (end == 0) return false;
  if (ends_with_cjk_mark(text, end)) return true;
  const char last = text[end - 1];
  if (last == '!' || last == '?') return true;
  return last == '.' && !is_abbreviation(text, end);
}

std::vector<Boundary> token_boundaries(std::string_view text, const Encoding& tokens) {
  const std::size_t n = tokens.size();
  std::vector<Boundary> boundaries(n + 1, Boundary::section);
  for (std::size_t j = 1; j < n; ++j) {
    const std::size_t gap_begin = tokens.offsets[j - 1].second, gap_end = tokens.offsets[j].first;
    KOTAE_ASSERT(gap_end <= text.size());
    if (gap_end < gap_begin) {  // token j starts inside token j-1's character
      boundaries[j] = Boundary::inside_character;
      continue;
    }
    int newlines = 0;
    bool space = false;
    for (std::size_t pos = gap_begin; pos < gap_end;) {
      const char c = text[pos];
      if (c == '\n') ++newlines;
      if (is_ascii_space(c)) {
        space = true;
        ++pos;
      } else {
        space = is_whitespace(decode_utf8(text, pos)) || space;
      }
    }
    Boundary& b = boundaries[j];
    if (newlines >= 2) {
      b = Boundary::paragraph;
    } else if (space) {
      b = ends_sentence(text, gap_begin) ? Boundary::sentence : newlines == 1 ? Boundary::line : Boundary::word;
    } else if (ends_with_cjk_mark(text, skip_closers(text, gap_begin))) {
      b = Boundary::sentence;
    } else if (splits_words(tokens, j, text)) {
      b = Boundary::pre_token;
    } else {
      b = Boundary::word_piece;
    }
  }
  return boundaries;
}

}  // namespace kotae::text
