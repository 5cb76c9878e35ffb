#pragma once
// Assembles a Document (text/document.h) from the blocks a loader finds in reading order:
// paragraphs, headings and page changes. It owns the normalised-text contract so that no loader
// re-implements it: whitespace collapsed, "\n" line breaks kept inside a block, blocks separated by
// exactly "\n\n", one segment per block with its page and heading path, and the text-size limit.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/stop_when.h"
#include "text/document.h"
#include "text/loaders/ocr.h"

namespace kotae::text {

// The widest table a loader keeps: LibreOffice's and Excel's widest sheet (column XFD).
constexpr std::uint32_t kMaxTableColumns = 16384;

// A table as a loader finds it: rows of raw cell text in order, the first row its header.
struct TableRows {
  std::string name;                            // a sheet's name; "" names it "Table N" (N counts the document's tables)
  std::vector<std::vector<std::string>> rows;  // rows may hold fewer cells than others
  std::vector<std::uint32_t> row_numbers;      // each row's number in its source (a sheet's); empty: 1, 2, ...
};

class DocumentBuilder {
 public:
  explicit DocumentBuilder(std::uint64_t max_text_bytes, StopWhen stop = {})
      : max_text_bytes_(max_text_bytes), stop_(stop) {}

  // Later blocks come from this 1-based page (0: the format has no pages).
  void set_page(std::uint32_t page) { page_ = page; }

  // Appends a block of raw text. Runs of horizontal whitespace become one space, "\r\n" and "\r"
  // become "\n", a blank line (or a form feed) splits it into several blocks, control characters and
  // invisible format characters are dropped and malformed UTF-8 becomes U+FFFD. Blank text adds nothing.
  void add_paragraph(std::string_view raw);

  // Later headings are `levels` deeper than they say: an e-mail's HTML body under its message's subject.
  void nest_headings(int levels) { heading_offset_ = levels; }

  // Appends a heading of `level` (1 outermost) on one line; it closes every open heading of the same
  // or a deeper level, and it and the blocks after it carry the new heading path.
  void add_heading(int level, std::string_view raw);

  // Appends a table as one block of Markdown lines: "| a | b |", the header's "| --- | --- |", then a
  // line per row, each row a segment (text/document.h). Cells are normalised onto one line and their
  // "|" escaped; rows and columns empty throughout are left out. A table of one row or one column is
  // no table (a layout box, a list): its cells become paragraphs.
  void add_table(const TableRows& table);

  // Appends OCR'd lines (text/loaders/ocr.h): a block per paragraph, a line per line, each line's box
  // kept in Document::boxes for its bytes.
  void add_ocr_lines(const std::vector<OcrLine>& lines);

  // Appends a running header, footer or page number of the current page: a block of its own outside
  // every heading, marked TextSegment::furniture so that no chunk holds it. Loaders add them last.
  void add_furniture(std::string_view raw);

  // Appends another document's blocks as they are (an e-mail's attachment): each under the open
  // headings, followed by its own heading path, on the current page; its tables stay tables.
  void add_document(const Document& part);

  // Closes every open heading: later blocks carry an empty heading path (a new slide without a title).
  void close_headings() {
    open_headings_.clear();
    heading_path_.clear();
  }

  // True once appending would have passed max_text_bytes or `stop` says the work should end (asked
  // here and before every block); later blocks are ignored, so a loader may end early, and finish()
  // reports why.
  bool stopped();

  const std::string& first_heading() const { return first_heading_; }

  // The document, or an error when the text limit was passed, the work was stopped or no text was found. `title` falls
  // back to the first heading when empty.
  Result<Document> finish(std::string format, const std::string& title, std::uint32_t pages) &&;

 private:
  void append_block(std::string_view block);
  bool append_table_line(std::string_view line, std::string_view separator, std::uint32_t row);
  bool append_text(std::string_view text, std::string_view separator);

  std::uint64_t max_text_bytes_;
  std::uint32_t page_ = 0;
  std::vector<std::pair<int, std::string>> open_headings_;  // (level, text), outermost first
  std::vector<std::string> heading_path_;
  std::string first_heading_;
  int heading_offset_ = 0;
  std::uint32_t tables_ = 0;
  std::string table_name_;
  std::size_t table_begin_ = 0, header_end_ = 0;
  StopWhen stop_;
  bool limit_exceeded_ = false;
  std::optional<Error> stop_error_;
  Document document_;
};

// `raw` normalised as add_paragraph does, split into its blocks.
std::vector<std::string> normalise_blocks(std::string_view raw);

// `raw` normalised onto one line (line breaks become spaces), as headings and titles are.
std::string normalise_line(std::string_view raw);

// A row of cells as one line: its cells normalised, the empty ones left out, joined by " | ".
std::string table_row_line(const std::vector<std::string>& cells);

}  // namespace kotae::text
