#include "rag/citations.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "text/stop_words.h"
#include "text/text_boundaries.h"

namespace kotae::rag {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::set<std::string> content_words(std::string_view text) {
  std::set<std::string> words;
  std::string word;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80)) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      if (word.size() > 2 && !text::is_english_stop_word(word)) words.insert(word);
      word.clear();
    }
  }
  return words;
}

// The answer's sentence that a marker at `at` closes: back from the marker to the previous sentence end.
std::string_view sentence_before(std::string_view answer, std::size_t at) {
  std::size_t end = at;
  while (end > 0 && (is_space(answer[end - 1]) || answer[end - 1] == ']')) {
    if (answer[end - 1] == ']') {  // an earlier marker of the same sentence
      const auto open = answer.rfind('[', end - 1);
      if (open == std::string_view::npos) break;
      end = open;
    } else {
      --end;
    }
  }
  std::size_t begin = end > 0 ? end - 1 : 0;  // skip the sentence's own final mark
  while (begin > 0 && !(answer[begin] == '\n' || (is_space(answer[begin]) && text::ends_sentence(answer, begin))))
    --begin;
  return answer.substr(begin, end - begin);
}

struct Marker {
  std::size_t begin = 0, end = 0;
  std::vector<int> numbers;
};

// A marker at `at` ('['): digits separated by commas and spaces, then ']'.
bool parse_marker(std::string_view s, std::size_t at, Marker& m) {
  m = {at, at, {}};
  std::size_t i = at + 1;
  for (;;) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t digits = i;
    int n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - digits < 4)
      n = n * 10 + (s[i++] - '0');
    if (i == digits) return false;
    m.numbers.push_back(n);
    while (i < s.size() && s[i] == ' ') ++i;
    if (i < s.size() && s[i] == ']') {
      m.end = i + 1;
      return true;
    }
    if (i >= s.size() || s[i] != ',') return false;
    ++i;
  }
}

}  // namespace

std::string citation_marker(int number) {
  std::string marker(1, '[');
  marker += std::to_string(number);
  marker += ']';
  return marker;
}

std::vector<std::pair<std::size_t, std::size_t>> split_sentences(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t begin = 0;
  auto close = [&](std::size_t end) {
    while (begin < end && is_space(text[begin])) ++begin;
    std::size_t e = end;
    while (e > begin && is_space(text[e - 1])) --e;
    if (e > begin) out.emplace_back(begin, e);
    begin = end;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (is_space(text[i]) && text::ends_sentence(text, i))) close(i);
  }
  close(text.size());
  return out;
}

namespace {

bool is_table_line(std::string_view line) {
  return line.size() >= 2 && line.front() == '|' && line.back() == '|';
}

// The line of `text` around byte `at`: [begin, end) without its "\n".
std::pair<std::size_t, std::size_t> line_around(std::string_view text, std::size_t at) {
  const std::size_t newline = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  const std::size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
  return {begin, std::min(text.size(), text.find('\n', at))};
}

// A source's byte as its document holds it: a table's piece starts with the table's header repeated,
// bytes that are not in the chunk's span (store::ChunkRecord::repeated_bytes).
std::size_t document_offset(const Source& source, std::size_t at) {
  const std::size_t span = source.end >= source.begin ? source.end - source.begin : 0;
  const std::size_t repeated = source.text.size() > span ? source.text.size() - span : 0;
  return source.begin + (at > repeated ? at - repeated : 0);
}

}  // namespace

std::optional<TableRow> table_row_at(std::string_view text, std::size_t at) {
  const auto [row_begin, row_end] = line_around(text, at);
  if (!is_table_line(text.substr(row_begin, row_end - row_begin))) return std::nullopt;
  std::size_t first = row_begin;  // back over the table's lines to its first
  while (first > 0) {
    const auto [previous, ignored] = line_around(text, first - 1);
    if (!is_table_line(text.substr(previous, first - 1 - previous))) break;
    first = previous;
  }
  const std::size_t second = text.find('\n', first);
  if (second == std::string_view::npos) return std::nullopt;
  const std::size_t header_end = line_around(text, second + 1).second;
  if (header_end >= row_begin) return std::nullopt;  // the header itself
  return TableRow{row_begin, row_end, first, header_end};
}

Citation cite(const Source& source, std::size_t begin, std::size_t end) {
  const std::string_view text = source.text;
  std::string header;
  if (const auto row = table_row_at(text, begin); row && end <= row->end) {
    header = std::string(text.substr(row->header_begin, row->header_end - row->header_begin));
    begin = row->begin;
    end = row->end;
  }
  Citation c;
  c.number = source.number;
  c.chunk_id = source.chunk_id;
  c.document_id = source.document_id;
  c.document = source.document;
  c.title = source.title;
  c.metadata_json = source.metadata_json;
  c.format = source.format;
  c.page = source.page_first;
  c.page_last = source.page_last;
  c.start = document_offset(source, begin);
  c.end = document_offset(source, end);
  c.text = source.text.substr(begin, end - begin);
  c.table_header = std::move(header);
  for (const auto& box : source.boxes) {
    if (box.begin < c.end && c.start < box.end) c.boxes.push_back(box);
  }
  return c;
}

CitedAnswer resolve_citations(std::string_view answer, std::span<const Source> sources) {
  CitedAnswer out;
  struct Pending {
    const Source* source;
    std::size_t answer_start, answer_end;
    std::string_view claim;
  };
  std::vector<Pending> pending;
  for (std::size_t i = 0; i < answer.size();) {
    Marker m;
    if (answer[i] != '[' || !parse_marker(answer, i, m)) {
      out.text += answer[i++];
      continue;
    }
    const std::string_view claim = sentence_before(answer, i);
    bool kept = false;
    for (const int n : m.numbers) {
      auto source = std::find_if(sources.begin(), sources.end(), [&](const Source& s) { return s.number == n; });
      if (source == sources.end()) {
        ++out.removed_markers;
        continue;
      }
      const std::string marker = citation_marker(n);
      pending.push_back({&*source, out.text.size(), out.text.size() + marker.size(), claim});
      out.text += marker;
      kept = true;
    }
    if (!kept && !out.text.empty() && out.text.back() == ' ' &&
        (m.end >= answer.size() || !std::isalnum(static_cast<unsigned char>(answer[m.end])))) {
      out.text.pop_back();  // "word [9]." -> "word."
    }
    i = m.end;
  }
  for (const auto& p : pending) {
    const auto claim_words = content_words(p.claim);
    std::size_t best_shared = 0, best_begin = 0, best_end = p.source->text.size();
    for (const auto& [b, e] : split_sentences(p.source->text)) {
      const auto words = content_words(std::string_view(p.source->text).substr(b, e - b));
      std::size_t shared = 0;
      for (const auto& w : words) shared += claim_words.count(w);
      if (shared > best_shared) {
        best_shared = shared;
        best_begin = b;
        best_end = e;
      }
    }
    Citation c = cite(*p.source, best_begin, best_end);
    c.answer_start = p.answer_start;
    c.answer_end = p.answer_end;
    out.citations.push_back(std::move(c));
  }
  return out;
}

}  // namespace kotae::rag
