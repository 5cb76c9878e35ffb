#include "text/loaders/pdf_lines.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

namespace kotae::text {
namespace {

// Two words on one line farther apart than this fraction of the font size are two words even
// where the PDF puts no space between them (a running header's date and title, table cells).
constexpr double kWordGap = 0.25;
// Wider than any word space, even a justified line's: the gap between table cells or tab stops.
constexpr double kSpreadGap = 0.7;
// Wider still: the gutter between columns, whose lines are two lines even on one baseline.
constexpr double kColumnGap = 3;

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}

// erase, not resize: GCC 12 warns (-Wrestrict) on a shrinking resize it cannot see is one.
void drop_last(std::string& text, std::size_t bytes) {
  text.erase(text.size() - bytes);
}

std::string_view last_word(std::string_view line) {
  const std::size_t space = line.rfind(' ');
  return space == std::string_view::npos ? line : line.substr(space + 1);
}

// Goes from a line ending in `last` to the next, starting with `next`. A word broken after a hyphen
// or a dash is joined again, losing the hyphen only when it split a lower-case word; any other line
// break stays.
void break_line(std::string& text, std::string_view last, std::string_view next) {
  constexpr std::string_view kSoftHyphen = "\u00AD";  // a hyphenation point, never a character of the text
  if (text.ends_with(kSoftHyphen)) {
    drop_last(text, kSoftHyphen.size());
    return;
  }
  constexpr std::string_view kMarks[] = {"-", "\u2010", "\u2013", "\u2014"};  // hyphens, en and em dash
  std::string_view mark;
  for (const std::string_view m : kMarks) {
    if (last.ends_with(m)) mark = m;
  }
  if (mark.empty() || last.size() == mark.size()) {  // no mark, or a dash standing alone between words
    text += '\n';
    return;
  }
  const bool hyphen = mark == "-" || mark == "\u2010";
  const char before = last[last.size() - mark.size() - 1];
  if (hyphen && is_lower(before) && !next.empty() && is_lower(next[0])) drop_last(text, mark.size());
}

// The line's size and weight: those of most of its characters.
void set_font(PdfLine& line, std::span<const PdfWord> words, const std::vector<std::size_t>& members) {
  std::map<long, std::size_t> by_size;  // tenths of a point -> characters
  std::size_t bold = 0, all = 0;
  for (const std::size_t i : members) {
    const std::size_t chars = std::max<std::size_t>(1, words[i].text.size());
    by_size[std::lround(words[i].size() * 10)] += chars;
    all += chars;
    if (words[i].bold) bold += chars;
  }
  const auto most = std::max_element(by_size.begin(), by_size.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  line.font_size = static_cast<double>(most->first) / 10;
  line.bold = bold * 2 > all;
}

}  // namespace

bool same_line(const PdfWord& a, const PdfWord& b) {
  const double height = std::max(1.0, std::min(a.height, b.height));
  const double a_middle = a.y + a.height / 2, b_middle = b.y + b.height / 2;
  return std::abs(a_middle - b_middle) < height / 2 && b.x >= a.x;
}

std::vector<PdfLine> pdf_lines(std::span<const PdfWord> words, const std::vector<bool>& skip) {
  std::vector<PdfLine> lines;
  std::vector<std::size_t> members;
  const auto close = [&] {
    if (members.empty()) return;
    set_font(lines.back(), words, members);
    members.clear();
  };
  const PdfWord* previous = nullptr;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!skip.empty() && skip[i]) continue;
    const PdfWord& word = words[i];
    const bool beside =
        previous != nullptr && same_line(*previous, word) &&
        word.x - (previous->x + previous->width) <= kColumnGap * std::max(previous->size(), word.size());
    if (beside) {
      PdfLine& line = lines.back();
      const double gap = word.x - (previous->x + previous->width);
      const double size = std::max(previous->size(), word.size());
      if (previous->space_after || gap > kWordGap * size) line.text += ' ';
      line.spread = line.spread || gap > kSpreadGap * size;
      line.text += word.text;
      line.right = std::max(line.right, word.x + word.width);
      line.top = std::min(line.top, word.y);
      line.bottom = std::max(line.bottom, word.y + word.height);
      ++line.words;
    } else {
      close();
      lines.push_back({.text = word.text,
                       .left = word.x,
                       .top = word.y,
                       .right = word.x + word.width,
                       .bottom = word.y + word.height,
                       .words = 1});
    }
    members.push_back(i);
    previous = &word;
  }
  close();
  return lines;
}

std::string join_lines(std::span<const PdfLine> lines) {
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) break_line(text, last_word(lines[i - 1].text), lines[i].text);
    text += lines[i].text;
  }
  return text;
}

}  // namespace kotae::text
