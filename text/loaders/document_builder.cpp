#include "text/loaders/document_builder.h"

#include <algorithm>

#include "core/assert.h"
#include "text/loaders/utf8_text.h"
#include "text/unicode.h"

namespace kotae::text {
namespace {

enum class CharClass { visible, space, line_break, block_break, dropped };

CharClass classify(char32_t c) {
  switch (c) {
    case '\n':
    case 0x85:
    case 0x2028: return CharClass::line_break;
    case '\f':
    case 0x2029: return CharClass::block_break;
    // Invisible characters that only get in the way of search: soft hyphen, zero-width space, BOM.
    case 0xAD:
    case 0x200B:
    case 0xFEFF: return CharClass::dropped;
    default: break;
  }
  if (is_whitespace(c)) return CharClass::space;  // tab, vertical tab, NBSP, the U+2000 spaces...
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return CharClass::dropped;
  return CharClass::visible;
}

// Splits and normalises in one pass. '\r' is handled first so that "\r\n" is one line break.
template <class Emit>
void for_each_block(std::string_view raw, bool keep_line_breaks, Emit&& emit) {
  std::string block;
  bool pending_space = false;
  int pending_breaks = 0;  // line breaks since the last visible character of `block`
  std::size_t pos = 0;
  while (pos < raw.size()) {
    char32_t c = next_code_point(raw, pos);
    if (c == '\r') {
      if (pos < raw.size() && raw[pos] == '\n') continue;  // the '\n' comes next
      c = '\n';
    }
    switch (classify(c)) {
      case CharClass::dropped: continue;
      case CharClass::space: pending_space = true; continue;
      case CharClass::line_break:
        if (keep_line_breaks)
          ++pending_breaks;
        else
          pending_space = true;
        continue;
      case CharClass::block_break:
        if (keep_line_breaks)
          pending_breaks += 2;
        else
          pending_space = true;
        continue;
      case CharClass::visible: break;
    }
    if (!block.empty()) {
      if (pending_breaks >= 2) {
        emit(std::move(block));
        block.clear();
      } else if (pending_breaks == 1) {
        block += '\n';
      } else if (pending_space) {
        block += ' ';
      }
    }
    pending_space = false;
    pending_breaks = 0;
    append_utf8(block, c);
  }
  if (!block.empty()) emit(std::move(block));
}

}  // namespace

std::vector<std::string> normalise_blocks(std::string_view raw) {
  std::vector<std::string> blocks;
  for_each_block(raw, true, [&](std::string block) { blocks.push_back(std::move(block)); });
  return blocks;
}

std::string normalise_line(std::string_view raw) {
  std::string line;
  for_each_block(raw, false, [&](std::string block) { line = std::move(block); });
  return line;
}

void DocumentBuilder::add_paragraph(std::string_view raw) {
  if (stopped()) return;
  for_each_block(raw, true, [&](const std::string& block) { append_block(block); });
}

void DocumentBuilder::add_heading(int level, std::string_view raw) {
  KOTAE_ASSERT(level >= 0);
  if (stopped()) return;
  std::string heading = normalise_line(raw);
  if (heading.empty()) return;
  level += heading_offset_;
  while (!open_headings_.empty() && open_headings_.back().first >= level) open_headings_.pop_back();
  open_headings_.emplace_back(level, heading);
  heading_path_.clear();
  for (const auto& [open_level, text] : open_headings_) heading_path_.push_back(text);
  if (first_heading_.empty()) first_heading_ = heading;
  append_block(heading);
}

void DocumentBuilder::append_block(std::string_view block) {
  KOTAE_ASSERT(!block.empty());
  append_text(block, document_.text.empty() ? "" : "\n\n");
}

namespace {

// A cell on one line of a Markdown table: its "|" escaped so that it stays one cell.
std::string markdown_cell(std::string_view raw) {
  std::string cell;
  for (const char c : normalise_line(raw)) {
    if (c == '|') cell += '\\';
    cell += c;
  }
  return cell;
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& cell : cells) (cell.empty() ? line : line.append(" ").append(cell)).append(" |");
  return line;
}

}  // namespace

void DocumentBuilder::add_table(const TableRows& table) {
  if (stopped()) return;
  // Normalised first, so that a row or column of spaces counts as empty.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::uint32_t> numbers;
  std::vector<bool> column_used;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    std::vector<std::string> cells;
    bool any = false;
    for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
      cells.push_back(markdown_cell(table.rows[r][c]));
      if (cells.back().empty()) continue;
      any = true;
      if (column_used.size() <= c) column_used.resize(c + 1, false);
      column_used[c] = true;
    }
    if (!any) continue;
    rows.push_back(std::move(cells));
    numbers.push_back(r < table.row_numbers.size() ? table.row_numbers[r] : static_cast<std::uint32_t>(r + 1));
  }
  const auto columns = std::count(column_used.begin(), column_used.end(), true);
  if (rows.size() < 2 || columns < 2) {
    for (const auto& row : rows) add_paragraph(table_row_line(row));
    return;
  }
  for (auto& row : rows) {
    std::vector<std::string> kept;
    for (std::size_t c = 0; c < column_used.size(); ++c) {
      if (column_used[c]) kept.push_back(c < row.size() ? std::move(row[c]) : std::string());
    }
    row = std::move(kept);
  }
  ++tables_;
  table_name_ = table.name.empty() ? "Table " + std::to_string(tables_) : normalise_line(table.name);
  std::string header = markdown_row(rows[0]);
  header += '\n';
  header += markdown_row(std::vector<std::string>(rows[0].size(), "---"));
  if (!append_table_line(header, document_.text.empty() ? "" : "\n\n", numbers[0])) return;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (stopped() || !append_table_line(markdown_row(rows[r]), "\n", numbers[r])) return;
  }
}

void DocumentBuilder::add_ocr_lines(const std::vector<OcrLine>& lines) {
  std::string block;
  std::vector<TextBox> boxes;  // offsets in `block`, until it is appended
  const auto flush = [&] {
    if (block.empty()) return;
    const std::size_t begin = document_.text.empty() ? 0 : document_.text.size() + 2;
    if (stopped() || !append_text(block, document_.text.empty() ? "" : "\n\n")) return;
    for (TextBox& box : boxes) {
      box.begin += begin;
      box.end += begin;
      document_.boxes.push_back(box);
    }
    block.clear();
    boxes.clear();
  };
  for (const OcrLine& line : lines) {
    const std::string text = normalise_line(line.text);
    if (text.empty()) continue;
    if (line.starts_paragraph) flush();
    if (!block.empty()) block += '\n';
    boxes.push_back({block.size(), block.size() + text.size(), page_, line.left, line.top, line.right, line.bottom});
    block += text;
  }
  flush();
}

void DocumentBuilder::add_furniture(std::string_view raw) {
  if (stopped()) return;
  close_headings();
  const std::string line = normalise_line(raw);
  if (line.empty() || !append_text(line, document_.text.empty() ? "" : "\n\n")) return;
  document_.segments.back().furniture = true;
}

void DocumentBuilder::add_document(const Document& part) {
  std::size_t table_begin = 0;  // where the part's open table starts in this document
  for (std::size_t i = 0; i < part.segments.size() && !stopped(); ++i) {
    const TextSegment& from = part.segments[i];
    const bool next_row = i > 0 && from.in_table() && part.segments[i - 1].in_table() &&
                          part.segments[i - 1].table_begin == from.table_begin;
    if (!append_text(std::string_view(part.text).substr(from.begin, from.end - from.begin), document_.text.empty() ? ""
                                                                                            : next_row ? "\n"
                                                                                                       : "\n\n")) {
      return;
    }
    TextSegment& to = document_.segments.back();
    to.heading_path.insert(to.heading_path.end(), from.heading_path.begin(), from.heading_path.end());
    to.furniture = from.furniture;
    if (!from.in_table()) continue;
    if (!next_row) table_begin = to.begin;
    to.table = from.table;
    to.row = from.row;
    to.table_begin = table_begin;
    to.header_end = table_begin + (from.header_end - from.table_begin);
  }
}

// Appends already normalised text as one segment under the open headings.
bool DocumentBuilder::append_text(std::string_view block, std::string_view separator) {
  std::string& text = document_.text;
  if (text.size() + separator.size() + block.size() > max_text_bytes_) {
    limit_exceeded_ = true;
    return false;
  }
  text += separator;
  TextSegment segment;
  segment.begin = text.size();
  text += block;
  segment.end = text.size();
  segment.page = page_;
  segment.heading_path = heading_path_;
  document_.segments.push_back(std::move(segment));
  return true;
}

// The header line starts the table (`separator` "\n\n" or ""); every row after it is one "\n" on.
bool DocumentBuilder::append_table_line(std::string_view line, std::string_view separator, std::uint32_t row) {
  if (!append_text(line, separator)) return false;
  TextSegment& segment = document_.segments.back();
  if (separator != "\n") {
    table_begin_ = segment.begin;
    header_end_ = segment.end;
  }
  segment.table = table_name_;
  segment.row = std::max<std::uint32_t>(row, 1);
  segment.table_begin = table_begin_;
  segment.header_end = header_end_;
  return true;
}

bool DocumentBuilder::stopped() {
  if (!limit_exceeded_ && !stop_error_) {
    if (auto go_on = stop_.check(); !go_on) stop_error_ = go_on.error();
  }
  return limit_exceeded_ || stop_error_;
}

Result<Document> DocumentBuilder::finish(std::string format, const std::string& title, std::uint32_t pages) && {
  if (stop_error_) return *stop_error_;
  if (limit_exceeded_) {
    return make_error(ErrorCode::invalid_argument,
                      "extracted text exceeds max_text_bytes (" + std::to_string(max_text_bytes_) + ")");
  }
  if (document_.text.empty()) return make_error(ErrorCode::invalid_argument, "document contains no text");
  document_.format = std::move(format);
  document_.title = normalise_line(title);
  if (document_.title.empty()) document_.title = first_heading_;
  document_.pages = pages;
  return std::move(document_);
}

std::string table_row_line(const std::vector<std::string>& cells) {
  std::string row;
  for (const auto& cell : cells) {
    const std::string text = normalise_line(cell);
    if (text.empty()) continue;
    if (!row.empty()) row += " | ";
    row += text;
  }
  return row;
}

}  // namespace kotae::text
