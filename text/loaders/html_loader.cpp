// HTML to text with libxml2's forgiving HTML parser: headings h1-h6 become headings, block elements
// end a paragraph, inline text is joined with whitespace collapsed (kept inside <pre>), and parts a
// reader does not read as content (scripts, styles, navigation, templates, the <head> except its
// <title>) are dropped. A table is a Markdown table (its caption a paragraph before it; a cell that
// spans columns keeps its text in the first); a table inside a cell is part of that cell's line.
// Entities and the declared charset are libxml2's to decode.

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/assert.h"
#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/html_reader.h"
#include "text/loaders/quiet_libxml.h"
#include "text/loaders/utf8_text.h"

namespace kotae::text {
namespace {

std::string_view name_of(const xmlNode* node) {
  return reinterpret_cast<const char*>(node->name);
}

bool is_one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (const auto candidate : names) {
    if (name == candidate) return true;
  }
  return false;
}

bool attribute_is(const xmlNode* node, const char* attribute, std::initializer_list<std::string_view> values) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(attribute));
  const bool matches = value != nullptr && is_one_of(reinterpret_cast<const char*>(value), values);
  xmlFree(value);
  return matches;
}

bool is_skipped(const xmlNode* node) {
  const std::string_view name = name_of(node);
  if (is_one_of(name, {"script", "style", "nav", "noscript", "template", "head", "title", "svg", "math", "iframe",
                       "object", "embed", "canvas", "select", "button", "datalist", "audio", "video"})) {
    return true;
  }
  // Hidden content, and navigation marked by role or (DocBook's HTML, common in /usr/share/doc) by
  // class rather than by <nav>.
  if (xmlHasProp(node, reinterpret_cast<const xmlChar*>("hidden")) != nullptr) return true;
  return attribute_is(node, "role", {"navigation"}) || attribute_is(node, "class", {"navheader", "navfooter"});
}

bool is_block(std::string_view name) {
  return is_one_of(
      name, {"p",        "div",    "li",       "ul",      "ol",        "dl",         "dt",         "dd",      "tr",
             "table",    "thead",  "tbody",    "tfoot",   "caption",   "pre",        "blockquote", "section", "article",
             "aside",    "main",   "header",   "footer",  "figure",    "figcaption", "address",    "hr",      "form",
             "fieldset", "legend", "details",  "summary", "center",    "body",       "html",       "hgroup",  "menu",
             "dialog",   "option", "textarea", "listing", "plaintext", "xmp"});
}

int heading_level(std::string_view name) {
  if (name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6') return name[1] - '0';
  return 0;
}

// Appends a text node's content; outside <pre> every line break is only whitespace.
void append_text(std::string& out, const xmlNode* node, bool preformatted) {
  if (node->content == nullptr) return;
  const std::string_view text = reinterpret_cast<const char*>(node->content);
  if (preformatted) {
    out += text;
    return;
  }
  for (const char c : text) out += (c == '\n' || c == '\r' || c == '\f') ? ' ' : c;
}

const xmlNode* find_element(const xmlNode* node, std::string_view name, std::uint32_t depth) {
  if (depth > 64) return nullptr;  // <title> sits near the root; no need to search deep
  for (; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE) continue;
    if (name_of(node) == name) return node;
    if (name_of(node) == "body") continue;
    if (const xmlNode* found = find_element(node->children, name, depth + 1)) return found;
  }
  return nullptr;
}

class HtmlWalker {
 public:
  HtmlWalker(DocumentBuilder& out, std::uint32_t max_depth) : out_(out), max_depth_(max_depth) {}

  // False when the nesting passed max_depth.
  bool walk(const xmlNode* first) {
    walk_children(first, 1);
    flush();
    return !too_deep_;
  }

 private:
  void walk_children(const xmlNode* node, std::uint32_t depth) {
    if (depth > max_depth_) {
      too_deep_ = true;
      return;
    }
    for (; node != nullptr && !too_deep_ && !out_.stopped(); node = node->next) {
      if (node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE) {
        append_text(paragraph_, node, preformatted_ > 0);
        continue;
      }
      if (node->type != XML_ELEMENT_NODE || is_skipped(node)) continue;
      walk_element(node, depth);
    }
  }

  void walk_element(const xmlNode* node, std::uint32_t depth) {
    const std::string_view name = name_of(node);
    // Inside a table cell or a heading everything is part of one line: no headings, no paragraph breaks.
    const bool one_line = one_line_ > 0;
    if (const int level = heading_level(name); level != 0 && !one_line) {
      flush();
      ++one_line_;
      walk_children(node->children, depth + 1);
      --one_line_;
      out_.add_heading(level, paragraph_);
      paragraph_.clear();
      return;
    }
    if (name == "br") {
      paragraph_ += '\n';
      return;
    }
    if (name == "table" && !one_line) {
      flush();
      TableRows table;
      read_rows(node->children, depth + 1, table);
      out_.add_table(table);
      return;
    }
    if (name == "td" || name == "th") {
      // Cells of one row stay on one line, told apart by " | "; empty cells (layout, icons) vanish.
      const std::size_t start = paragraph_.size();
      const bool separated = !cells_in_row_.empty() && cells_in_row_.back() > 0;
      if (separated) paragraph_ += " | ";
      const std::size_t content = paragraph_.size();
      ++one_line_;
      walk_children(node->children, depth + 1);
      --one_line_;
      KOTAE_ASSERT(paragraph_.size() >= content);  // nothing inside a cell flushes
      if (normalise_line(std::string_view(paragraph_).substr(content)).empty()) {
        paragraph_.resize(start);
      } else if (!cells_in_row_.empty()) {
        ++cells_in_row_.back();
      }
      paragraph_ += ' ';
      return;
    }
    if (!is_block(name)) {
      walk_children(node->children, depth + 1);
      return;
    }
    break_block(one_line);
    const bool row = name == "tr";
    const bool preformatted = is_one_of(name, {"pre", "listing", "plaintext", "xmp", "textarea"});
    if (row) cells_in_row_.push_back(0);
    if (preformatted) ++preformatted_;
    walk_children(node->children, depth + 1);
    if (preformatted) --preformatted_;
    if (row) cells_in_row_.pop_back();
    break_block(one_line);
  }

  // The rows of a table, in its thead, tbody and tfoot (not those of tables inside its cells).
  void read_rows(const xmlNode* node, std::uint32_t depth, TableRows& table) {
    if (depth > max_depth_) {
      too_deep_ = true;
      return;
    }
    for (; node != nullptr && !too_deep_ && !out_.stopped(); node = node->next) {
      if (node->type != XML_ELEMENT_NODE || is_skipped(node)) continue;
      const std::string_view name = name_of(node);
      if (name == "caption") {
        walk_element(node, depth);
      } else if (name == "tr") {
        read_cells(node->children, depth + 1, table.rows.emplace_back());
      } else {
        read_rows(node->children, depth + 1, table);
      }
    }
  }

  void read_cells(const xmlNode* node, std::uint32_t depth, std::vector<std::string>& row) {
    for (; node != nullptr && !too_deep_; node = node->next) {
      if (node->type != XML_ELEMENT_NODE || !is_one_of(name_of(node), {"td", "th"})) continue;
      std::string outside = std::move(paragraph_);
      paragraph_.clear();
      ++one_line_;
      walk_children(node->children, depth + 1);
      --one_line_;
      row.push_back(std::move(paragraph_));
      paragraph_ = std::move(outside);
      row.resize(row.size() + static_cast<std::size_t>(column_span(node) - 1));
    }
  }

  static int column_span(const xmlNode* cell) {
    xmlChar* value = xmlGetProp(cell, reinterpret_cast<const xmlChar*>("colspan"));
    const int span = value == nullptr ? 1 : std::atoi(reinterpret_cast<const char*>(value));
    xmlFree(value);
    return std::clamp(span, 1, 64);
  }

  // A block element ends the paragraph, except on a line that must stay whole, where it only
  // separates words.
  void break_block(bool one_line) {
    if (one_line)
      paragraph_ += ' ';
    else
      flush();
  }

  void flush() {
    out_.add_paragraph(paragraph_);
    paragraph_.clear();
  }

  DocumentBuilder& out_;
  std::uint32_t max_depth_;
  std::string paragraph_;
  std::vector<int> cells_in_row_;
  int preformatted_ = 0;
  int one_line_ = 0;  // open table cells and headings
  bool too_deep_ = false;
};

struct FreeParserContext {
  void operator()(htmlParserCtxtPtr context) const { htmlFreeParserCtxt(context); }
};
struct FreeDocument {
  void operator()(xmlDocPtr document) const { xmlFreeDoc(document); }
};

}  // namespace

Result<std::string> read_html(DocumentBuilder& out, std::string_view bytes, const LoadLimits& limits) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    return make_error(ErrorCode::invalid_argument, "HTML document is too large for libxml2 (over 2 GiB)");
  }
  QuietLibxml quiet;
  std::unique_ptr<htmlParserCtxt, FreeParserContext> context(htmlNewParserCtxt());
  if (!context) return make_error(ErrorCode::internal, "libxml2 could not create an HTML parser");
  // Valid UTF-8 is read as UTF-8 whatever the page declares; anything else is left to libxml2, which
  // follows a <meta charset> and falls back to Latin-1.
  const char* encoding = is_valid_utf8(bytes) ? "UTF-8" : nullptr;
  std::unique_ptr<xmlDoc, FreeDocument> document(htmlCtxtReadMemory(
      context.get(), bytes.data(), static_cast<int>(bytes.size()), nullptr, encoding,
      HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_COMPACT));
  if (!document) return make_error(ErrorCode::corrupt, "libxml2 could not parse the HTML");
  // libxml2 stops a parse (keeping what it read) past its own nesting limit of 256: that is a limit
  // error too, not a silently truncated document.
  const xmlError& last_error = context->lastError;
  if (last_error.code == XML_ERR_INTERNAL_ERROR && last_error.message != nullptr &&
      std::string_view(last_error.message).find("depth") != std::string_view::npos) {
    return make_error(
        ErrorCode::invalid_argument,
        "HTML nesting exceeds max_depth (" + std::to_string(limits.max_depth) + "; libxml2 also stops at 256)");
  }

  const xmlNode* root = xmlDocGetRootElement(document.get());
  std::string title;
  if (const xmlNode* title_node = find_element(root, "title", 0)) {
    xmlChar* content = xmlNodeGetContent(title_node);
    if (content != nullptr) title = reinterpret_cast<const char*>(content);
    xmlFree(content);
  }
  HtmlWalker walker(out, limits.max_depth);
  if (!walker.walk(root)) {
    return make_error(ErrorCode::invalid_argument,
                      "HTML nesting exceeds max_depth (" + std::to_string(limits.max_depth) + ")");
  }
  return title;
}

Result<Document> load_html(std::string_view bytes, const LoadLimits& limits) {
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  auto title = read_html(builder, bytes, limits);
  if (!title) return title.error();
  return std::move(builder).finish("html", *title, 0);
}

}  // namespace kotae::text
