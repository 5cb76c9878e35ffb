#include "text/loaders/pdf_page_text.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace kotae::text {
namespace {

// Blocks are set apart by more than this fraction of a line's height; the lines of one block are
// (nearly) touching.
constexpr double kBlockGap = 0.4;

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}

// erase, not resize: GCC 12 warns (-Wrestrict) on a shrinking resize it cannot see is one.
void drop_last(std::string& text, std::size_t bytes) {
  text.erase(text.size() - bytes);
}

bool same_line(const PdfWord& a, const PdfWord& b) {
  const double height = std::max(1.0, std::min(a.height, b.height));
  const double a_middle = a.y + a.height / 2, b_middle = b.y + b.height / 2;
  return std::abs(a_middle - b_middle) < height / 2 && b.x >= a.x;
}

bool new_block(const PdfWord& a, const PdfWord& b) {
  const double gap = b.y - (a.y + a.height);
  return gap > kBlockGap * std::max(a.height, b.height) || b.y + b.height <= a.y;  // below, or back up (a column)
}

// Goes from a line ending in `last_word` to the next, starting with `next`. A word broken after a
// hyphen or a dash is joined again, losing the hyphen only when it split a lower-case word; any other
// line break stays.
void break_line(std::string& text, std::string_view last_word, std::string_view next) {
  constexpr std::string_view kSoftHyphen = "\u00AD";  // a hyphenation point, never a character of the text
  if (text.ends_with(kSoftHyphen)) {
    drop_last(text, kSoftHyphen.size());
    return;
  }
  constexpr std::string_view kMarks[] = {"-", "\u2010", "\u2013", "\u2014"};  // hyphens, en and em dash
  std::string_view mark;
  for (const std::string_view m : kMarks) {
    if (last_word.ends_with(m)) mark = m;
  }
  if (mark.empty() || last_word.size() == mark.size()) {  // no mark, or a dash standing alone between words
    text += '\n';
    return;
  }
  const bool hyphen = mark == "-" || mark == "\u2010";
  const char before = last_word[last_word.size() - mark.size() - 1];
  if (hyphen && is_lower(before) && !next.empty() && is_lower(next[0])) drop_last(text, mark.size());
}

}  // namespace

std::string pdf_page_text(std::span<const PdfWord> words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) {
      const PdfWord& previous = words[i - 1];
      if (same_line(previous, words[i])) {
        if (previous.space_after) text += ' ';
      } else if (new_block(previous, words[i])) {
        text += "\n\n";
      } else {
        break_line(text, previous.text, words[i].text);
      }
    }
    text += words[i].text;
  }
  return text;
}

}  // namespace kotae::text
