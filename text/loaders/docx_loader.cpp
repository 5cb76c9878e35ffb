// DOCX (Office Open XML) to text: the zip is read with libzip, word/document.xml with libxml2's
// streaming reader. Paragraphs (w:p) become blocks, runs' text (w:t) is joined (w:tab is a space,
// w:br a line break), paragraphs whose style is a heading or the Title become headings, and tables
// become Markdown tables (a merged cell's text in its first column; a nested table reads as part of
// its cell, a row per line).
// Zip bombs are stopped twice: by each entry's declared size and by the bytes actually inflated.

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/quiet_libxml.h"
#include "text/loaders/xml_part.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {
namespace {

constexpr std::string_view kWordNamespace = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
constexpr std::string_view kMarkupCompatibilityNamespace =
    "http://schemas.openxmlformats.org/markup-compatibility/2006";

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Heading level of a style name or id: "heading 2" / "Heading2" -> 2, "Title" -> 0.
std::optional<int> heading_level_of_style(std::string_view name) {
  const std::string lower = lowercase(name);
  if (lower == "title") return 0;
  std::string_view rest = lower;
  if (!rest.starts_with("heading")) return std::nullopt;
  rest.remove_prefix(7);
  if (rest.starts_with(' ')) rest.remove_prefix(1);
  if (rest.size() == 1 && rest[0] >= '1' && rest[0] <= '9') return rest[0] - '0';
  return std::nullopt;
}

// Outline level attribute (0-based, 9 = body text) as a heading level, or nullopt.
std::optional<int> heading_level_of_outline(const std::string& value) {
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '8') return value[0] - '0' + 1;
  return std::nullopt;
}

using StyleLevels = std::map<std::string, int, std::less<>>;

// Paragraph style id -> heading level, from word/styles.xml (localised Word files name their
// heading styles "heading N" but give them other ids).
Result<StyleLevels> read_style_levels(const std::string& xml, std::uint32_t max_depth) {
  StyleLevels levels;
  XmlPart reader(xml, "DOCX", "word/styles.xml");
  std::string style_id;  // of the w:style being read
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (auto deep = reader.too_deep(max_depth)) return *deep;
    if (reader.is("style", kWordNamespace)) {
      style_id =
          reader.attribute("type", kWordNamespace) == "paragraph" ? reader.attribute("styleId", kWordNamespace) : "";
    } else if (!style_id.empty() && reader.is("name", kWordNamespace)) {
      if (const auto level = heading_level_of_style(reader.attribute("val", kWordNamespace))) levels[style_id] = *level;
    } else if (!style_id.empty() && reader.is("outlineLvl", kWordNamespace) && !levels.contains(style_id)) {
      if (const auto level = heading_level_of_outline(reader.attribute("val", kWordNamespace)))
        levels[style_id] = *level;
    }
  }
  if (auto error = reader.error(max_depth)) return *error;
  return levels;
}

// Walks word/document.xml and hands its blocks to the builder in reading order.
class BodyReader {
 public:
  BodyReader(DocumentBuilder& out, const StyleLevels& style_levels, std::uint32_t max_depth)
      : out_(out), style_levels_(style_levels), max_depth_(max_depth) {}

  Result<void> read(const std::string& xml) {
    XmlPart reader(xml, "DOCX", "word/document.xml");
    bool skip_subtree = false;
    while (reader.next(skip_subtree) && !out_.stopped()) {
      skip_subtree = false;
      const int type = reader.type();
      if (type == XML_READER_TYPE_ELEMENT) {
        if (auto deep = reader.too_deep(max_depth_)) return *deep;
        // mc:Fallback repeats the mc:Choice content (text boxes drawn twice) for older readers.
        if (reader.local_name() == "Fallback" && reader.namespace_uri() == kMarkupCompatibilityNamespace) {
          skip_subtree = true;
          continue;
        }
        if (reader.namespace_uri() == kWordNamespace) start_element(reader);
      } else if (type == XML_READER_TYPE_END_ELEMENT) {
        if (reader.namespace_uri() == kWordNamespace) end_element(reader.local_name());
      } else if (in_text_ && reader.is_text()) {
        if (!paragraphs_.empty()) paragraphs_.back().text += reader.value();
      }
    }
    if (auto error = reader.error(max_depth_)) return *error;
    return {};
  }

  const std::string& title_paragraph() const { return title_paragraph_; }

 private:
  struct Paragraph {
    std::string text;
    std::optional<int> heading_level;
  };
  struct Table {
    TableRows rows;
    bool in_row = false;
    int span = 1;  // columns the open cell spans (w:gridSpan)
    bool in_cell() const { return in_row && !rows.rows.back().empty(); }
  };

  void start_element(const XmlPart& reader) {
    const std::string_view name = reader.local_name();
    const bool empty = reader.empty_element();
    if (name == "p") {
      if (!empty) paragraphs_.emplace_back();
    } else if (name == "tbl") {
      if (!empty) tables_.emplace_back();
    } else if (name == "tr") {
      if (!empty && !tables_.empty()) {
        tables_.back().rows.rows.emplace_back();
        tables_.back().in_row = true;
      }
    } else if (name == "tc") {
      if (!tables_.empty() && tables_.back().in_row) {
        Table& table = tables_.back();
        table.rows.rows.back().resize(table.rows.rows.back().size() + static_cast<std::size_t>(table.span - 1));
        table.rows.rows.back().emplace_back();
        table.span = 1;
      }
    } else if (name == "gridSpan") {
      if (!tables_.empty() && tables_.back().in_cell()) {
        tables_.back().span = std::clamp(std::atoi(reader.attribute("val", kWordNamespace).c_str()), 1, 64);
      }
    } else if (name == "r") {
      if (!empty) ++runs_;
    } else if (name == "t") {
      in_text_ = !empty && runs_ > 0;
    } else if (paragraphs_.empty()) {
      return;
    } else if (name == "pStyle") {
      const std::string style = reader.attribute("val", kWordNamespace);
      const auto found = style_levels_.find(style);
      paragraphs_.back().heading_level =
          found != style_levels_.end() ? std::optional<int>(found->second) : heading_level_of_style(style);
    } else if (name == "outlineLvl" && !paragraphs_.back().heading_level) {
      paragraphs_.back().heading_level = heading_level_of_outline(reader.attribute("val", kWordNamespace));
    } else if (runs_ > 0 && (name == "tab" || name == "ptab")) {
      paragraphs_.back().text += ' ';
    } else if (runs_ > 0 && (name == "br" || name == "cr")) {
      paragraphs_.back().text += '\n';
    } else if (runs_ > 0 && name == "noBreakHyphen") {
      paragraphs_.back().text += '-';
    }
  }

  void end_element(std::string_view name) {
    if (name == "t") {
      in_text_ = false;
    } else if (name == "r") {
      if (runs_ > 0) --runs_;
    } else if (name == "p" && !paragraphs_.empty()) {
      Paragraph paragraph = std::move(paragraphs_.back());
      paragraphs_.pop_back();
      end_paragraph(std::move(paragraph));
    } else if (name == "tr" && !tables_.empty()) {
      tables_.back().in_row = false;
      tables_.back().span = 1;
    } else if (name == "tbl" && !tables_.empty()) {
      TableRows table = std::move(tables_.back().rows);
      tables_.pop_back();
      if (!tables_.empty() && tables_.back().in_cell()) {
        for (const auto& row : table.rows) tables_.back().rows.rows.back().back() += ' ' + table_row_line(row);
      } else {
        out_.add_table(table);
      }
    }
  }

  void end_paragraph(Paragraph paragraph) {
    if (!tables_.empty() && tables_.back().in_cell()) {
      tables_.back().rows.rows.back().back() += ' ' + paragraph.text;
    } else if (paragraph.heading_level) {
      if (*paragraph.heading_level == 0 && title_paragraph_.empty()) title_paragraph_ = normalise_line(paragraph.text);
      out_.add_heading(*paragraph.heading_level, paragraph.text);
    } else {
      out_.add_paragraph(paragraph.text);
    }
  }

  DocumentBuilder& out_;
  const StyleLevels& style_levels_;
  std::uint32_t max_depth_;
  std::vector<Paragraph> paragraphs_;  // open paragraphs; a text box nests one inside another
  std::vector<Table> tables_;          // open tables, innermost last
  int runs_ = 0;
  bool in_text_ = false;
  std::string title_paragraph_;
};

}  // namespace

Result<Document> load_docx(std::string_view bytes, const LoadLimits& limits) {
  auto archive = ZipArchive::open(bytes, "DOCX", limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;

  auto body = archive->read_required("word/document.xml");
  if (!body) return body.error();

  StyleLevels style_levels;
  auto styles = archive->read("word/styles.xml");
  if (!styles) return styles.error();
  if (*styles) {
    auto levels = read_style_levels(**styles, limits.max_depth);
    if (!levels) return levels.error();
    style_levels = std::move(*levels);
  }

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  BodyReader reader(builder, style_levels, limits.max_depth);
  if (auto read = reader.read(*body); !read) return read.error();

  auto core = archive->read("docProps/core.xml");
  if (!core) return core.error();
  const CoreProperties properties =
      *core ? read_core_properties(**core, "DOCX", "docProps/core.xml") : CoreProperties{};
  std::string title = reader.title_paragraph();
  if (title.empty()) title = properties.title;
  auto document = std::move(builder).finish("docx", title, 0);
  if (document) add_core_properties(properties, document->metadata);
  return document;
}

}  // namespace kotae::text
