// PPTX (Office Open XML slides) to text: the zip through ZipArchive, each part through libxml2's
// streaming reader (XmlPart). Slides come in the presentation's order (ppt/presentation.xml's slide
// list, resolved through its relationships); each slide is a page, so every chunk knows its slide.
// Within a slide the title comes first, as a heading, then the other shapes top to bottom and left to
// right (their offsets), each paragraph (a:p) a block, a table a Markdown table, as DOCX's are; the
// speaker notes (the notes slide's body) follow the slide's shapes.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/package_relationships.h"
#include "text/loaders/quiet_libxml.h"
#include "text/loaders/xml_part.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {
namespace {

constexpr std::string_view kPresentation = "http://schemas.openxmlformats.org/presentationml/2006/main";
constexpr std::string_view kDrawing = "http://schemas.openxmlformats.org/drawingml/2006/main";

// One shape's text: its paragraphs or its table, its place on the slide and whether it is a title.
struct Shape {
  std::vector<std::string> blocks;
  TableRows table;
  long long y = 0, x = 0;
  bool title = false;
  bool skipped = false;  // a placeholder of the notes page that is not the notes (slide image, number)
};

// The shapes of a slide or notes part, in document order.
Result<std::vector<Shape>> read_shapes(const std::string& xml, std::string_view part, std::uint32_t max_depth) {
  std::vector<Shape> shapes;
  XmlPart reader(xml, "PPTX", part);
  int shape_depth = -1;  // depth of the open top-level shape (p:sp or p:graphicFrame), -1 when none
  std::string paragraph;
  bool in_paragraph = false, in_text = false, offset_seen = false;
  std::vector<std::string> row;  // cells of the open table row
  bool in_row = false;
  while (reader.next()) {
    const int type = reader.type();
    if (type == XML_READER_TYPE_ELEMENT) {
      if (auto deep = reader.too_deep(max_depth)) return *deep;
      const std::string_view name = reader.local_name();
      const bool presentation = reader.namespace_uri() == kPresentation;
      const bool drawing = reader.namespace_uri() == kDrawing;
      if (presentation && (name == "sp" || name == "graphicFrame") && shape_depth < 0 && !reader.empty_element()) {
        shape_depth = reader.depth();
        shapes.emplace_back();
        offset_seen = false;
      } else if (shape_depth < 0) {
        continue;
      } else if (presentation && name == "ph") {
        const std::string ph = reader.attribute("type");
        shapes.back().title = ph == "title" || ph == "ctrTitle";
        shapes.back().skipped = ph == "sldImg" || ph == "sldNum" || ph == "dt" || ph == "ftr" || ph == "hdr";
      } else if (drawing && name == "off" && !offset_seen) {
        offset_seen = true;
        shapes.back().x = std::strtoll(reader.attribute("x").c_str(), nullptr, 10);
        shapes.back().y = std::strtoll(reader.attribute("y").c_str(), nullptr, 10);
      } else if (drawing && name == "tr" && !reader.empty_element()) {
        in_row = true;
        row.clear();
      } else if (drawing && name == "tc" && in_row) {
        row.emplace_back();
      } else if (drawing && name == "p" && !reader.empty_element()) {
        in_paragraph = true;
        paragraph.clear();
      } else if (drawing && name == "t") {
        in_text = in_paragraph && !reader.empty_element();
      } else if (drawing && name == "br" && in_paragraph) {
        paragraph += '\n';
      }
    } else if (type == XML_READER_TYPE_END_ELEMENT) {
      if (shape_depth < 0) continue;
      const std::string_view name = reader.local_name();
      const bool drawing = reader.namespace_uri() == kDrawing;
      if (reader.depth() == shape_depth && reader.namespace_uri() == kPresentation) {
        shape_depth = -1;
      } else if (drawing && name == "t") {
        in_text = false;
      } else if (drawing && name == "p" && in_paragraph) {
        in_paragraph = false;
        if (in_row && !row.empty()) {
          if (!row.back().empty()) row.back() += ' ';
          row.back() += paragraph;
        } else {
          shapes.back().blocks.push_back(std::move(paragraph));
        }
        paragraph.clear();
      } else if (drawing && name == "tr" && in_row) {
        in_row = false;
        shapes.back().table.rows.push_back(std::move(row));
        row.clear();
      }
    } else if (in_text && reader.is_text()) {
      paragraph += reader.value();
    }
  }
  if (auto error = reader.error(max_depth)) return *error;
  return shapes;
}

// The slide parts in presentation order.
Result<std::vector<std::string>> read_slide_order(ZipArchive& archive, const LoadLimits& limits) {
  constexpr std::string_view kMain = "ppt/presentation.xml";
  auto xml = archive.read_required(kMain);
  if (!xml) return xml.error();
  auto relationships = read_relationships(archive, kMain, "PPTX", limits.max_depth);
  if (!relationships) return relationships.error();
  std::vector<std::string> slides;
  XmlPart reader(*xml, "PPTX", kMain);
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (auto deep = reader.too_deep(limits.max_depth)) return *deep;
    if (!reader.is("sldId", kPresentation)) continue;
    const auto found = relationships->find(reader.attribute("id", kRelationshipIds));
    if (found == relationships->end() || found->second.type != "slide") continue;
    if (slides.size() == limits.max_pages) {
      return limit_error("PPTX has more slides than allowed", "max_pages", limits.max_pages);
    }
    slides.push_back(found->second.target);
  }
  if (auto error = reader.error(limits.max_depth)) return *error;
  return slides;
}

}  // namespace

Result<Document> load_pptx(std::string_view bytes, const LoadLimits& limits) {
  auto archive = ZipArchive::open(bytes, "PPTX", limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;
  auto slides = read_slide_order(*archive, limits);
  if (!slides) return slides.error();

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  std::string first_title;
  for (std::size_t i = 0; i < slides->size() && !builder.stopped(); ++i) {
    const std::string& part = (*slides)[i];
    auto xml = archive->read(part);
    if (!xml) return xml.error();
    if (!*xml) return make_error(ErrorCode::corrupt, "corrupt PPTX: the slide " + part + " is missing");
    auto shapes = read_shapes(**xml, part, limits.max_depth);
    if (!shapes) return shapes.error();
    // The title first, then top to bottom, left to right; a shape's own order breaks ties.
    std::stable_sort(shapes->begin(), shapes->end(), [](const Shape& a, const Shape& b) {
      if (a.title != b.title) return a.title;
      return a.y != b.y ? a.y < b.y : a.x < b.x;
    });
    builder.set_page(static_cast<std::uint32_t>(i + 1));
    builder.close_headings();  // a slide without a title is under none, not under the last slide's
    for (const Shape& shape : *shapes) {
      if (!shape.title) {
        for (const std::string& block : shape.blocks) builder.add_paragraph(block);
        builder.add_table(shape.table);
        continue;
      }
      // A title set over several paragraphs is one heading.
      std::string heading;
      for (const std::string& block : shape.blocks) heading += block + ' ';
      builder.add_heading(1, heading);
      if (first_title.empty()) first_title = normalise_line(heading);
    }
    // The speaker notes: the notes slide's body placeholder (its slide image and number are skipped).
    auto relationships = read_relationships(*archive, part, "PPTX", limits.max_depth);
    if (!relationships) return relationships.error();
    for (const auto& [id, relationship] : *relationships) {
      if (relationship.type != "notesSlide") continue;
      auto notes = archive->read(relationship.target);
      if (!notes) return notes.error();
      if (!*notes) continue;
      auto note_shapes = read_shapes(**notes, relationship.target, limits.max_depth);
      if (!note_shapes) return note_shapes.error();
      for (const Shape& shape : *note_shapes) {
        if (shape.skipped || shape.title) continue;
        for (const std::string& block : shape.blocks) builder.add_paragraph(block);
        builder.add_table(shape.table);
      }
    }
  }

  auto core = archive->read("docProps/core.xml");
  if (!core) return core.error();
  const CoreProperties properties =
      *core ? read_core_properties(**core, "PPTX", "docProps/core.xml") : CoreProperties{};
  std::string title = properties.title.empty() ? first_title : properties.title;
  auto document = std::move(builder).finish("pptx", title, static_cast<std::uint32_t>(slides->size()));
  if (document) {
    document->pages_are_units = true;
    add_core_properties(properties, document->metadata);
  }
  return document;
}

}  // namespace kotae::text
