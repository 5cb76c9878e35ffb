// ODT (OpenDocument text) to text: the zip through ZipArchive, content.xml through libxml2's streaming
// reader (XmlPart). Headings (text:h, their outline level) and paragraphs (text:p, in lists too)
// become blocks; text:s is its count of spaces, text:tab a space, text:line-break a line break; a
// table's rows are blocks with cells joined by " | ", as DOCX's are. Comments (office:annotation),
// tracked deletions and the footnote marks are left out; a footnote's text is a block of its own.
// The title is meta.xml's dc:title, else the first heading.

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

class ContentReader {
 public:
  ContentReader(DocumentBuilder& out, std::uint32_t max_depth) : out_(out), max_depth_(max_depth) {}

  Result<void> read(const std::string& xml) {
    XmlPart reader(xml, "ODT", "content.xml");
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
    return {};
  }

 private:
  struct Paragraph {
    std::string text;
    std::optional<int> heading_level;
  };

  // Returns whether to skip the element's subtree.
  bool start_element(const XmlPart& reader) {
    const std::string_view name = reader.local_name();
    const bool empty = reader.empty_element();
    if (reader.namespace_uri() == kOffice) return name == "annotation";
    if (reader.namespace_uri() == kTable) {
      if (name == "table-row" && !empty) {
        rows_.emplace_back();
      } else if ((name == "table-cell" || name == "covered-table-cell") && !rows_.empty()) {
        rows_.back().emplace_back();
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
      if (!rows_.empty() && !rows_.back().empty()) {
        std::string& cell = rows_.back().back();
        if (!cell.empty()) cell += ' ';
        cell += paragraph.text;
      } else if (paragraph.heading_level) {
        out_.add_heading(*paragraph.heading_level, paragraph.text);
      } else {
        out_.add_paragraph(paragraph.text);
      }
    } else if (reader.namespace_uri() == kTable && name == "table-row" && !rows_.empty()) {
      const std::string row = table_row_line(rows_.back());
      rows_.pop_back();
      if (!rows_.empty() && !rows_.back().empty()) {
        rows_.back().back() += ' ' + row;  // a nested table reads as part of its cell
      } else {
        out_.add_paragraph(row);
      }
    }
  }

  DocumentBuilder& out_;
  std::uint32_t max_depth_;
  std::vector<Paragraph> paragraphs_;           // open paragraphs; a footnote's nests in its paragraph
  std::vector<std::vector<std::string>> rows_;  // open table rows' cells, innermost last
};

}  // namespace

Result<Document> load_odt(std::string_view bytes, const LoadLimits& limits) {
  auto archive = ZipArchive::open(bytes, "ODT", limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;
  auto content = archive->read_required("content.xml");
  if (!content) return content.error();

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  ContentReader reader(builder, limits.max_depth);
  if (auto read = reader.read(*content); !read) return read.error();

  std::string title;
  auto meta = archive->read("meta.xml");
  if (!meta) return meta.error();
  if (*meta) title = dublin_core_title(**meta, "ODT", "meta.xml");
  return std::move(builder).finish("odt", title, 0);
}

}  // namespace kotae::text
