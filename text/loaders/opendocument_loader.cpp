// ODT (OpenDocument text) and ODS (OpenDocument spreadsheet) to text: the zip through ZipArchive,
// content.xml through libxml2's streaming reader (XmlPart). Headings (text:h, their outline level) and
// paragraphs (text:p, in lists too) become blocks; text:s is its count of spaces, text:tab a space,
// text:line-break a line break; a table is a Markdown table (a nested one reads as part of its cell).
// Comments (office:annotation), tracked deletions and the footnote marks are left out; a footnote's
// text is a block of its own. The title is meta.xml's dc:title, else the first heading.
//
// A spreadsheet's sheets are tables named after the sheet, each under a heading of its name, rows
// numbered as the sheet numbers them. A cell shows what it displays (a formula's cached result, a
// number as formatted) except a date, which reads as its ISO date. Repeated rows and columns
// (table:number-rows-repeated, number-columns-repeated: how a million empty rows are stored) are
// counted, and repeated only where they hold text, within the text limit.

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/quiet_libxml.h"
#include "text/loaders/xml_part.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {
namespace {

constexpr std::string_view kText = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";
constexpr std::string_view kTable = "urn:oasis:names:tc:opendocument:xmlns:table:1.0";
constexpr std::string_view kOffice = "urn:oasis:names:tc:opendocument:xmlns:office:1.0";

std::uint32_t repeat_count(const XmlPart& reader, const char* attribute) {
  const long count = std::atol(reader.attribute(attribute, kTable).c_str());
  return count >= 1 && count <= 1 << 20 ? static_cast<std::uint32_t>(count) : 1;
}

class ContentReader {
 public:
  ContentReader(DocumentBuilder& out, const LoadLimits& limits, const char* kind, bool spreadsheet)
      : out_(out),
        max_depth_(limits.max_depth),
        kind_(kind),
        max_table_bytes_(limits.max_text_bytes),
        spreadsheet_(spreadsheet) {}

  Result<void> read(const std::string& xml) {
    XmlPart reader(xml, kind_, "content.xml");
    bool skip_subtree = false;
    while (reader.next(skip_subtree) && !out_.stopped()) {
      skip_subtree = false;
      const int type = reader.type();
      if (type == XML_READER_TYPE_ELEMENT) {
        if (auto deep = reader.too_deep(max_depth_)) return *deep;
        skip_subtree = start_element(reader);
      } else if (type == XML_READER_TYPE_END_ELEMENT) {
        end_element(reader);
      } else if (reader.is_text() && !paragraphs_.empty()) {
        paragraphs_.back().text += reader.value();
      }
    }
    if (auto error = reader.error(max_depth_)) return *error;
    if (too_large_) {
      return make_error(ErrorCode::invalid_argument,
                        "a table's text exceeds max_text_bytes (" + std::to_string(max_table_bytes_) + ")");
    }
    return {};
  }

 private:
  struct Paragraph {
    std::string text;
    std::optional<int> heading_level;
  };
  struct Table {
    TableRows rows;
    std::uint32_t row_number = 0;      // the sheet's number of the open row
    std::uint32_t rows_repeated = 1;   // of the open row
    std::uint32_t cells_repeated = 1;  // of the open cell
    std::optional<std::string> date;   // the open cell's office:date-value
    std::size_t empty_run = 0;         // empty cells of the open row not kept yet: only if text follows
    bool in_row = false;
    bool cell_open = false;
    bool in_cell() const { return in_row && cell_open && !rows.rows.empty() && !rows.rows.back().empty(); }
  };

  void start_table(const XmlPart& reader) {
    Table& table = tables_.emplace_back();
    if (spreadsheet_ && tables_.size() == 1) table.rows.name = reader.attribute("name", kTable);
  }

  void start_row(const XmlPart& reader) {
    Table& table = tables_.back();
    end_cell(table);                          // a row begun inside a cell (malformed) closes it
    table.row_number += table.rows_repeated;  // past the rows the last one stood for
    table.rows_repeated = repeat_count(reader, "number-rows-repeated");
    table.rows.rows.emplace_back();
    table.rows.row_numbers.push_back(table.row_number);
    table.in_row = true;
  }

  void start_cell(const XmlPart& reader) {
    Table& table = tables_.back();
    end_cell(table);
    table.cells_repeated = repeat_count(reader, "number-columns-repeated");
    std::string date = reader.attribute("date-value", kOffice);
    table.date = date.empty() ? std::nullopt : std::optional<std::string>(date.substr(0, date.find("T00:00:00")));
    table.rows.rows.back().emplace_back();
    table.cell_open = true;
  }

  // The open cell, repeated as many times as it stands for where it holds text (within the sheet's
  // width). Empty cells only move the columns on, and are kept only where a cell with text follows
  // them (a row's trailing "1,020 empty cells" costs nothing); the memory of those kept is counted
  // against the text limit, so that rows of 16,384 columns cannot fill memory.
  void end_cell(Table& table) {
    const bool open = table.cell_open && !table.rows.rows.empty() && !table.rows.rows.back().empty();
    table.cell_open = false;
    if (!open) return;  // none, or a row begun inside a cell (malformed): that cell stays as it is
    auto& row = table.rows.rows.back();
    if (table.date) row.back() = *table.date;
    table.date.reset();
    const std::size_t cells = std::min<std::uint32_t>(table.cells_repeated, kMaxTableColumns);
    table.cells_repeated = 1;
    std::string text = std::move(row.back());
    row.pop_back();
    if (text.empty()) {
      table.empty_run += cells;
      return;
    }
    const std::size_t width = kMaxTableColumns;
    const std::size_t gap = std::min(table.empty_run, width - std::min(row.size(), width));
    table.empty_run = 0;
    count_bytes(gap * sizeof(std::string));
    if (too_large_) return;
    row.resize(row.size() + gap);
    const std::size_t copies = std::min(cells, width - row.size());
    count_bytes(text.size() * copies + sizeof(std::string) * (copies > 0 ? copies - 1 : 0));
    if (!too_large_) row.resize(row.size() + copies, text);
  }

  // The open row, repeated as many times as it stands for where it holds text.
  void end_row(Table& table) {
    end_cell(table);
    table.empty_run = 0;
    table.in_row = false;
    auto& rows = table.rows.rows;
    const bool blank = std::all_of(rows.back().begin(), rows.back().end(), [](const auto& c) { return c.empty(); });
    if (blank) {
      rows.pop_back();
      table.rows.row_numbers.pop_back();
      return;
    }
    std::size_t bytes = 0;
    for (const auto& cell : rows.back()) bytes += cell.size() + sizeof(std::string);
    for (std::uint32_t r = 1; r < table.rows_repeated && !too_large_; ++r) {
      count_bytes(bytes);
      rows.push_back(rows.back());
      table.rows.row_numbers.push_back(table.row_number + r);
    }
  }

  void end_table() {
    Table table = std::move(tables_.back());
    tables_.pop_back();
    if (!tables_.empty() && tables_.back().in_cell()) {
      for (const auto& row : table.rows.rows) tables_.back().rows.rows.back().back() += ' ' + table_row_line(row);
    } else if (spreadsheet_ && !table.rows.rows.empty()) {
      out_.close_headings();
      out_.add_heading(1, table.rows.name);
      out_.add_table(table.rows);
    } else {
      out_.add_table(table.rows);
    }
  }

  void count_bytes(std::size_t bytes) {
    table_bytes_ += bytes;
    if (table_bytes_ > max_table_bytes_) too_large_ = true;
  }

  // Returns whether to skip the element's subtree.
  bool start_element(const XmlPart& reader) {
    const std::string_view name = reader.local_name();
    const bool empty = reader.empty_element();
    if (reader.namespace_uri() == kOffice) return name == "annotation";
    if (reader.namespace_uri() == kTable) {
      if (name == "table" && !empty) {
        start_table(reader);
      } else if (tables_.empty()) {
        return false;
      } else if (name == "table-row") {
        start_row(reader);
        if (empty) end_row(tables_.back());
      } else if ((name == "table-cell" || name == "covered-table-cell") && tables_.back().in_row) {
        start_cell(reader);
        if (empty) end_cell(tables_.back());
      }
      return false;
    }
    if (reader.namespace_uri() != kText) return false;
    if (name == "tracked-changes" || name == "note-citation") return true;
    if ((name == "p" || name == "h") && !empty) {
      Paragraph paragraph;
      if (name == "h") {
        const int level = std::atoi(reader.attribute("outline-level", kText).c_str());
        paragraph.heading_level = level >= 1 && level <= 10 ? level : 1;
      }
      paragraphs_.push_back(std::move(paragraph));
    } else if (paragraphs_.empty()) {
      return false;
    } else if (name == "s") {
      const int count = std::atoi(reader.attribute("c", kText).c_str());
      paragraphs_.back().text.append(count >= 1 && count <= 64 ? static_cast<std::size_t>(count) : 1, ' ');
    } else if (name == "tab") {
      paragraphs_.back().text += ' ';
    } else if (name == "line-break") {
      paragraphs_.back().text += '\n';
    }
    return false;
  }

  void end_element(const XmlPart& reader) {
    const std::string_view name = reader.local_name();
    if (reader.namespace_uri() == kText && (name == "p" || name == "h") && !paragraphs_.empty()) {
      Paragraph paragraph = std::move(paragraphs_.back());
      paragraphs_.pop_back();
      if (!tables_.empty() && tables_.back().in_cell()) {
        std::string& cell = tables_.back().rows.rows.back().back();
        if (!cell.empty()) cell += ' ';
        count_bytes(paragraph.text.size());
        cell += paragraph.text;
      } else if (paragraph.heading_level) {
        out_.add_heading(*paragraph.heading_level, paragraph.text);
      } else {
        out_.add_paragraph(paragraph.text);
      }
    } else if (reader.namespace_uri() == kTable && !tables_.empty()) {
      if (name == "table-row" && tables_.back().in_row) {
        end_row(tables_.back());
      } else if (name == "table-cell" || name == "covered-table-cell") {
        if (tables_.back().in_row) end_cell(tables_.back());
      } else if (name == "table") {
        end_table();
      }
    }
  }

  DocumentBuilder& out_;
  std::uint32_t max_depth_;
  std::vector<Paragraph> paragraphs_;  // open paragraphs; a footnote's nests in its paragraph
  const char* kind_;
  std::vector<Table> tables_;  // open tables, innermost last
  std::uint64_t max_table_bytes_;
  std::uint64_t table_bytes_ = 0;  // cells' text read so far, repeats counted
  bool too_large_ = false;
  bool spreadsheet_;
};

// Both formats: content.xml read into a document, the title from meta.xml.
Result<Document> load_opendocument(std::string_view bytes, const LoadLimits& limits, const char* kind,
                                   std::string format) {
  auto archive = ZipArchive::open(bytes, kind, limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;
  auto content = archive->read_required("content.xml");
  if (!content) return content.error();

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  ContentReader reader(builder, limits, kind, format == "ods");
  if (auto read = reader.read(*content); !read) return read.error();

  auto meta = archive->read("meta.xml");
  if (!meta) return meta.error();
  const CoreProperties properties = *meta ? read_core_properties(**meta, kind, "meta.xml") : CoreProperties{};
  auto document = std::move(builder).finish(std::move(format), properties.title, 0);
  if (document) add_core_properties(properties, document->metadata);
  return document;
}

}  // namespace

Result<Document> load_odt(std::string_view bytes, const LoadLimits& limits) {
  return load_opendocument(bytes, limits, "ODT", "odt");
}

Result<Document> load_ods(std::string_view bytes, const LoadLimits& limits) {
  return load_opendocument(bytes, limits, "ODS", "ods");
}

}  // namespace kotae::text
