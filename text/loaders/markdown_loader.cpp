// Markdown (CommonMark and the common GitHub extensions) to text, line by line: ATX and setext
// headings become headings, paragraphs and list items become blocks (soft line breaks joined with a
// space), code is kept verbatim, and inline markup is stripped down to the text a reader sees: link
// text, image alt text, code span content, without emphasis markers or HTML tags.
// It is a pragmatic reader, not a full CommonMark parser: emphasis markers are removed by where they
// stand (flanking a word) rather than by pairing, and nested containers are flattened.

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/utf8_text.h"
#include "text/unicode.h"

namespace kotae::text {
namespace {

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

bool is_ascii_punct(char c) {
  return std::ispunct(static_cast<unsigned char>(c)) != 0;
}

// Bytes >= 0x80 belong to non-ASCII letters far more often than to punctuation.
bool is_word_byte(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b >= 0x80 || std::isalnum(b) != 0;
}

bool is_space_byte(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

std::string_view trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

// Width of the leading indentation (a tab counts 4) and the line without it.
std::size_t indentation(std::string_view line, std::string_view* rest) {
  std::size_t width = 0;
  std::size_t i = 0;
  for (; i < line.size() && (line[i] == ' ' || line[i] == '\t'); ++i) width += line[i] == '\t' ? 4 : 1;
  *rest = line.substr(i);
  return width;
}

// Longest link text or destination looked for: brackets left open would otherwise make every '['
// scan to the end of the paragraph (quadratic: a line of 200k '[' took minutes).
constexpr std::size_t kMaxLinkSpan = 4096;

// The position just past the bracket that closes the one at `open` (balanced, honouring backslash
// escapes), or npos; npos too when it is over kMaxLinkSpan bytes away.
std::size_t matching_close(std::string_view s, std::size_t open, char open_char, char close_char) {
  int depth = 0;
  const std::size_t end = std::min(s.size(), open + kMaxLinkSpan);
  for (std::size_t i = open; i < end; ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == open_char) {
      ++depth;
    } else if (s[i] == close_char && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

std::optional<char32_t> named_entity(std::string_view name) {
  struct Entity {
    std::string_view name;
    char32_t code_point;
  };
  static constexpr Entity kEntities[] = {
      {"amp", '&'},      {"lt", '<'},        {"gt", '>'},       {"quot", '"'},     {"apos", '\''},
      {"nbsp", 0xA0},    {"copy", 0xA9},     {"reg", 0xAE},     {"trade", 0x2122}, {"mdash", 0x2014},
      {"ndash", 0x2013}, {"hellip", 0x2026}, {"laquo", 0xAB},   {"raquo", 0xBB},   {"lsquo", 0x2018},
      {"rsquo", 0x2019}, {"ldquo", 0x201C},  {"rdquo", 0x201D}, {"euro", 0x20AC},  {"times", 0xD7},
      {"middot", 0xB7},  {"deg", 0xB0},      {"larr", 0x2190},  {"rarr", 0x2192},  {"bull", 0x2022}};
  for (const auto& entity : kEntities) {
    if (entity.name == name) return entity.code_point;
  }
  return std::nullopt;
}

// Decodes the character reference at s[i] == '&' into `out`; returns its length, or 0 if it is none.
std::size_t decode_entity(std::string_view s, std::size_t i, std::string& out) {
  const auto semicolon = s.substr(0, std::min(s.size(), i + 34)).find(';', i);  // bounded: "&&&&..." stays linear
  if (semicolon == std::string_view::npos || semicolon - i > 32 || semicolon == i + 1) return 0;
  const std::string_view body = s.substr(i + 1, semicolon - i - 1);
  char32_t cp = 0;
  if (body[0] == '#') {
    const bool hex = body.size() > 1 && (body[1] == 'x' || body[1] == 'X');
    const std::string_view digits = body.substr(hex ? 2 : 1);
    if (digits.empty() || digits.size() > 7) return 0;
    for (const char c : digits) {
      const int value = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                        : hex && std::isxdigit(static_cast<unsigned char>(c))
                            ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                            : -1;
      if (value < 0) return 0;
      cp = cp * (hex ? 16 : 10) + static_cast<char32_t>(value);
    }
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  } else {
    const auto named = named_entity(body);
    if (!named) return 0;
    cp = *named;
  }
  append_utf8(out, cp);
  return semicolon - i + 1;
}

// Length of the HTML tag or comment at s[i] == '<', or 0 when it is a plain '<'.
std::size_t html_tag_length(std::string_view s, std::size_t i) {
  if (s.substr(i).starts_with("<!--")) {
    const auto end = s.find("-->", i + 4);
    return end == std::string_view::npos ? 0 : end + 3 - i;
  }
  std::size_t j = i + 1;
  if (j < s.size() && (s[j] == '/' || s[j] == '!' || s[j] == '?')) ++j;
  if (j >= s.size() || !std::isalpha(static_cast<unsigned char>(s[j]))) return 0;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':')) ++j;
  if (j >= s.size() || !(s[j] == '>' || s[j] == '/' || is_space_byte(s[j]))) return 0;
  const auto close = s.find_first_of("<>", j);
  if (close == std::string_view::npos || s[close] != '>') return 0;
  return close + 1 - i;
}

// The text a reader sees in one paragraph's inline Markdown.
std::string strip_inline(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && is_ascii_punct(s[i + 1])) {
      out += s[i + 1];
      i += 2;
    } else if (c == '`') {
      std::size_t run = 0;
      while (i + run < s.size() && s[i + run] == '`') ++run;
      // A code span closes at the next run of exactly as many backticks.
      std::size_t close = i + run;
      for (;;) {
        close = s.find('`', close);
        if (close == std::string_view::npos) break;
        std::size_t close_run = 0;
        while (close + close_run < s.size() && s[close + close_run] == '`') ++close_run;
        if (close_run == run) break;
        close += close_run;
      }
      if (close == std::string_view::npos) {
        out.append(run, '`');
        i += run;
      } else {
        out += trim(s.substr(i + run, close - i - run));
        i = close + run;
      }
    } else if (c == '[' || (c == '!' && i + 1 < s.size() && s[i + 1] == '[')) {
      const std::size_t open = c == '!' ? i + 1 : i;
      const std::size_t label_end = matching_close(s, open, '[', ']');
      std::size_t after = std::string_view::npos;
      if (label_end != std::string_view::npos && label_end < s.size()) {
        if (s[label_end] == '(')
          after = matching_close(s, label_end, '(', ')');
        else if (s[label_end] == '[')
          after = matching_close(s, label_end, '[', ']');
      }
      if (after == std::string_view::npos) {
        out += c;  // not a link: the bracket is text, its content is read on
        ++i;
      } else {
        out += strip_inline(s.substr(open + 1, label_end - open - 2));
        i = after;
      }
    } else if (c == '<') {
      // An autolink holds no space or '<': the first of those or '>' ends the search (linear over "<<<<...").
      const auto stop = s.find_first_of("<> \t\r\n", i + 1);
      const auto close = stop != std::string_view::npos && s[stop] == '>' ? stop : std::string_view::npos;
      const std::string_view inner =
          close == std::string_view::npos ? std::string_view{} : s.substr(i + 1, close - i - 1);
      const bool autolink = !inner.empty() && inner.find_first_of(" <") == std::string_view::npos &&
                            (inner.find("://") != std::string_view::npos || inner.starts_with("mailto:") ||
                             (inner.find('@') != std::string_view::npos && inner.find(':') == std::string_view::npos));
      if (autolink) {
        out += inner;
        i = close + 1;
      } else if (const std::size_t tag = html_tag_length(s, i); tag != 0) {
        out += ' ';  // a tag may separate words (<br>); extra spaces are collapsed later
        i += tag;
      } else {
        out += c;
        ++i;
      }
    } else if (c == '&') {
      const std::size_t length = decode_entity(s, i, out);
      if (length == 0) out += c;
      i += length == 0 ? 1 : length;
    } else if (c == '*' || c == '_' || c == '~') {
      std::size_t run = 0;
      while (i + run < s.size() && s[i + run] == c) ++run;
      const char before = i == 0 ? ' ' : s[i - 1];
      const char after = i + run >= s.size() ? ' ' : s[i + run];
      const bool flanking = !(is_space_byte(before) && is_space_byte(after));
      const bool intraword = is_word_byte(before) && is_word_byte(after);
      const bool marker = flanking && !intraword && (c != '~' || run == 2);
      if (!marker) out.append(run, c);
      i += run;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

bool is_thematic_break(std::string_view t) {
  if (t.empty() || (t[0] != '*' && t[0] != '-' && t[0] != '_')) return false;
  std::size_t count = 0;
  for (const char c : t) {
    if (c == t[0])
      ++count;
    else if (c != ' ' && c != '\t')
      return false;
  }
  return count >= 3;
}

// "=" or "-" underline of a setext heading: 1 or 2, else 0.
int setext_level(std::string_view t) {
  t = trim(t);
  if (t.empty() || (t[0] != '=' && t[0] != '-')) return 0;
  if (t.find_first_not_of(t[0]) != std::string_view::npos) return 0;
  return t[0] == '=' ? 1 : 2;
}

// A table's delimiter row, e.g. "| --- | :-: |".
bool is_table_delimiter(std::string_view t) {
  t = trim(t);
  return t.find('-') != std::string_view::npos && t.find('|') != std::string_view::npos &&
         t.find_first_not_of("|-: \t") == std::string_view::npos;
}

bool is_link_definition(std::string_view t) {
  if (t.empty() || t[0] != '[') return false;
  const auto close = t.find("]:");
  return close != std::string_view::npos && close > 1;
}

// Where a list item's text starts after its marker ("- ", "* ", "+ ", "12. ", "3) "), or npos;
// `keep` is how much of the marker is text (ordered numbers are kept: they are referred to).
std::size_t list_item_start(std::string_view t, std::size_t* keep) {
  std::size_t i = 0;
  *keep = 0;
  if (!t.empty() && (t[0] == '-' || t[0] == '*' || t[0] == '+')) {
    i = 1;
  } else {
    while (i < t.size() && i < 9 && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (i == 0 || i >= t.size() || (t[i] != '.' && t[i] != ')')) return std::string_view::npos;
    ++i;
    *keep = i;
  }
  if (i == t.size()) return i;
  if (t[i] != ' ' && t[i] != '\t') return std::string_view::npos;
  return i + 1;
}

// One table row's cells, outer pipes dropped and "\\|" read as "|".
std::vector<std::string> table_cells(std::string_view t) {
  t = trim(t);
  if (t.starts_with('|')) t.remove_prefix(1);
  if (t.ends_with('|') && !t.ends_with("\\|")) t.remove_suffix(1);
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 0; i <= t.size(); ++i) {
    if (i + 1 < t.size() && t[i] == '\\' && t[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (i == t.size() || t[i] == '|') {
      cells.push_back(strip_inline(trim(cell)));
      cell.clear();
    } else {
      cell += t[i];
    }
  }
  return cells;
}

class MarkdownReader {
 public:
  explicit MarkdownReader(DocumentBuilder& out) : out_(out) {}

  void read(std::string_view text) {
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start <= text.size();) {
      auto end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      if (line.ends_with('\r')) line.remove_suffix(1);
      lines.push_back(line);
      start = end + 1;
    }
    std::size_t first = skip_front_matter(lines);
    for (std::size_t i = first; i < lines.size() && !out_.stopped(); ++i) read_line(lines[i]);
    flush();
    end_table();
  }

 private:
  enum class Block { none, paragraph, code };

  static std::size_t skip_front_matter(const std::vector<std::string_view>& lines) {
    if (lines.empty() || lines[0] != "---") return 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (lines[i] == "---" || lines[i] == "...") return i + 1;
    }
    return 0;
  }

  void read_line(std::string_view line) {
    if (fence_char_ != 0) return read_fenced_line(line);
    if (in_comment_) {
      if (line.find("-->") != std::string_view::npos) in_comment_ = false;
      return;
    }
    if (is_blank(line)) {
      flush();
      end_table();
      return;
    }
    std::string_view t;
    const std::size_t indent = indentation(line, &t);
    if (indent >= 4 && block_ != Block::paragraph) {
      if (block_ != Block::code) flush();
      block_ = Block::code;
      lines_.emplace_back(strip_columns(line, 4));
      return;
    }
    if (block_ == Block::code) flush();

    bool quoted = false;
    while (t.starts_with('>')) {
      quoted = true;
      t.remove_prefix(1);
      if (t.starts_with(' ')) t.remove_prefix(1);
      indentation(t, &t);
    }
    if (quoted != quoted_) flush();
    quoted_ = quoted;
    if (t.empty()) return flush();

    if (t.starts_with("```") || t.starts_with("~~~")) {
      flush();
      fence_char_ = t[0];
      fence_length_ = t.find_first_not_of(t[0]);
      if (fence_length_ == std::string_view::npos) fence_length_ = t.size();
      fence_indent_ = indent;
      block_ = Block::code;
      return;
    }
    if (t.starts_with("<!--")) {
      flush();
      in_comment_ = t.find("-->") == std::string_view::npos;
      return;
    }
    if (t[0] == '#') {
      const std::size_t level = t.find_first_not_of('#');
      const std::size_t hashes = level == std::string_view::npos ? t.size() : level;
      if (hashes <= 6 && (hashes == t.size() || t[hashes] == ' ' || t[hashes] == '\t')) {
        flush();
        std::string_view heading = trim(t.substr(hashes));
        // An optional closing sequence of '#' after a space is not part of the heading.
        const auto last = heading.find_last_not_of('#');
        if (last == std::string_view::npos)
          heading = {};
        else if (last + 1 < heading.size() && (heading[last] == ' ' || heading[last] == '\t'))
          heading = trim(heading.substr(0, last));
        out_.add_heading(static_cast<int>(hashes), strip_inline(heading));
        return;
      }
    }
    if (block_ == Block::paragraph && !list_item_ && !in_table_) {
      if (const int level = setext_level(t); level != 0) {
        out_.add_heading(level, strip_inline(joined_lines()));
        lines_.clear();
        block_ = Block::none;
        return;
      }
      if (lines_.size() == 1 && is_table_delimiter(t) && lines_[0].find('|') != std::string::npos) {
        const std::string header = lines_[0];
        lines_.clear();
        block_ = Block::none;
        table_.rows.push_back(table_cells(header));
        in_table_ = true;
        return;
      }
    }
    if (in_table_) return table_.rows.push_back(table_cells(t));
    if (is_thematic_break(t)) return flush();
    if (block_ != Block::paragraph && is_link_definition(t)) return;

    std::size_t keep = 0;
    if (const std::size_t start = list_item_start(t, &keep); start != std::string_view::npos) {
      flush();
      block_ = Block::paragraph;
      list_item_ = true;
      std::string item(t.substr(0, keep));
      if (keep != 0) item += ' ';
      item += t.substr(std::min(start, t.size()));
      lines_.push_back(std::move(item));
      return;
    }
    block_ = Block::paragraph;
    // A backslash ending a line is a hard line break, not text.
    if (t.ends_with('\\') && !t.ends_with("\\\\")) t.remove_suffix(1);
    lines_.emplace_back(t);
  }

  void read_fenced_line(std::string_view line) {
    std::string_view t;
    const std::size_t indent = indentation(line, &t);
    if (indent < 4 && t.starts_with(std::string(fence_length_, fence_char_)) &&
        trim(t).find_first_not_of(fence_char_) == std::string_view::npos) {
      fence_char_ = 0;
      flush();
      return;
    }
    lines_.emplace_back(strip_columns(line, fence_indent_));
  }

  // `line` without up to `columns` leading spaces.
  static std::string_view strip_columns(std::string_view line, std::size_t columns) {
    std::size_t i = 0;
    std::size_t width = 0;
    while (i < line.size() && width < columns && (line[i] == ' ' || line[i] == '\t')) {
      width += line[i] == '\t' ? 4 : 1;
      ++i;
    }
    return line.substr(i);
  }

  std::string joined_lines() const {
    std::string joined;
    for (const auto& line : lines_) {
      if (!joined.empty()) joined += ' ';
      joined += line;
    }
    return joined;
  }

  void end_table() {
    if (in_table_) out_.add_table(table_);
    table_.rows.clear();
    in_table_ = false;
  }

  void flush() {
    if (block_ == Block::code) {
      std::string code;
      for (const auto& line : lines_) {
        if (!code.empty()) code += '\n';
        code += line;
      }
      out_.add_paragraph(code);
    } else if (block_ == Block::paragraph) {
      out_.add_paragraph(normalise_line(strip_inline(joined_lines())));
    }
    lines_.clear();
    block_ = Block::none;
    list_item_ = false;
  }

  DocumentBuilder& out_;
  Block block_ = Block::none;
  std::vector<std::string> lines_;
  bool list_item_ = false;
  bool quoted_ = false;
  bool in_table_ = false;
  TableRows table_;
  bool in_comment_ = false;
  char fence_char_ = 0;
  std::size_t fence_length_ = 0;
  std::size_t fence_indent_ = 0;
};

}  // namespace

Result<Document> load_markdown(std::string_view bytes, const LoadLimits& limits) {
  // Files that are not UTF-8 are read as Latin-1: a fallback, so a legacy file still loads.
  const std::string text = decode_text_bytes(bytes);
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  MarkdownReader(builder).read(text);
  return std::move(builder).finish("md", "", 0);
}

}  // namespace kotae::text
