#include "text/sentences.h"

#include "text/text_boundaries.h"

namespace kotae::text {
namespace {

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A list item starts with a bullet or a number and a mark ("- x", "* x", "2. x", "3) x").
bool starts_list_item(std::string_view line) {
  if (line.starts_with("- ") || line.starts_with("* ") || line.starts_with("\u2022")) return true;
  std::size_t i = 0;
  while (i < line.size() && is_digit(line[i])) ++i;
  return i > 0 && i + 1 < line.size() && (line[i] == '.' || line[i] == ')') && line[i + 1] == ' ';
}

// Words a sentence does not end on: a line ending in one was wrapped, whatever the next one starts with.
bool ends_on_function_word(std::string_view line) {
  constexpr std::string_view kWords[] = {"a",    "an",   "the",  "of",  "to",   "in", "on",   "at",   "by",
                                         "for",  "from", "with", "as",  "and",  "or", "but",  "than", "that",
                                         "such", "is",   "are",  "was", "were", "be", "into", "via"};
  const std::size_t space = line.find_last_of(' ');
  const std::string_view word = space == std::string_view::npos ? line : line.substr(space + 1);
  for (const std::string_view w : kWords) {
    if (word == w) return true;
  }
  return false;
}

// Whether the line break at text[line_end, next_begin) wraps one sentence over two lines. A wrapped
// line goes on in lower case, or with a bracket, quote or number that is not a list item's, or after a
// comma, a dash or a function word; a heading, a list item or a new sentence does not.
bool continues_line(std::string_view text, std::size_t line_end, std::size_t next_begin) {
  std::size_t line_begin = text.rfind('\n', line_end - 1);
  line_begin = line_begin == std::string_view::npos ? 0 : line_begin + 1;
  const std::string_view line = text.substr(line_begin, line_end - line_begin);
  std::size_t next_end = text.find('\n', next_begin);
  const std::string_view next =
      text.substr(next_begin, next_end == std::string_view::npos ? text.npos : next_end - next_begin);
  if (next.empty() || starts_list_item(next)) return false;
  const char first = next[0];
  if (is_lower(first)) return true;
  if (std::string_view("(\"'[").find(first) != std::string_view::npos) return next.size() > 1 && is_lower(next[1]);
  if (line.empty()) return false;
  const char last = line.back();
  if (last == ',' || last == '-' || last == '/' || last == '(' || line.ends_with("\u2013") ||
      line.ends_with("\u2014")) {
    return true;
  }
  return (is_digit(first) || first == '"' || first == '(') ? is_lower(last) || ends_on_function_word(line)
                                                           : ends_on_function_word(line);
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
                     (boundaries[j] == Boundary::line &&
                      !continues_line(text, tokens.offsets[j - 1].second, tokens.offsets[j].first));
    if (!cut) continue;
    out.push_back({tokens.offsets[first].first, tokens.offsets[j - 1].second, first, j});
    first = j;
  }
  return out;
}

}  // namespace kotae::text
