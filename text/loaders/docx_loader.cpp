// DOCX (Office Open XML) to text: the zip is read with libzip, word/document.xml with libxml2's
// streaming reader. Paragraphs (w:p) become blocks, runs' text (w:t) is joined (w:tab is a space,
// w:br a line break), paragraphs whose style is a heading or the Title become headings, and tables
// become one block per row with cells joined by " | ".
// Zip bombs are stopped twice: by each entry's declared size and by the bytes actually inflated.

#include <libxml/xmlreader.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/quiet_libxml.h"

namespace kotae::text {
namespace {

constexpr std::string_view kWordNamespace = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
constexpr std::string_view kMarkupCompatibilityNamespace =
    "http://schemas.openxmlformats.org/markup-compatibility/2006";
constexpr std::string_view kDublinCoreNamespace = "http://purl.org/dc/elements/1.1/";

Error limit_error(std::string_view what, std::string_view limit, std::uint64_t value) {
  return make_error(ErrorCode::invalid_argument,
                    std::string(what) + ", over " + std::string(limit) + " (" + std::to_string(value) + ")");
}

// The open archive, its entries read within one budget of inflated bytes.
class DocxArchive {
 public:
  static Result<DocxArchive> open(std::string_view bytes, std::uint64_t max_decompressed_bytes) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
    zip_t* archive = source == nullptr ? nullptr : zip_open_from_source(source, ZIP_RDONLY, &error);
    if (archive == nullptr) {
      std::string reason = zip_error_strerror(&error);
      zip_error_fini(&error);
      if (source != nullptr) zip_source_free(source);
      return make_error(ErrorCode::corrupt, "corrupt DOCX: not a readable zip archive (" + reason + ")");
    }
    zip_error_fini(&error);
    return DocxArchive(archive, max_decompressed_bytes);
  }

  // The entry's bytes; nullopt when it does not exist.
  Result<std::optional<std::string>> read(const char* name) {
    const zip_int64_t index = zip_name_locate(archive_.get(), name, 0);
    if (index < 0) return std::optional<std::string>();
    const auto entry = static_cast<zip_uint64_t>(index);
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive_.get(), entry, 0, &stat) != 0) {
      return make_error(ErrorCode::corrupt, std::string("corrupt DOCX: cannot read the zip entry ") + name);
    }
    const std::uint64_t budget = max_bytes_ - inflated_;
    if ((stat.valid & ZIP_STAT_SIZE) != 0 && stat.size > budget) {
      return limit_error(
          std::string("DOCX entry ") + name + " declares " + std::to_string(stat.size) + " bytes uncompressed",
          "max_decompressed_bytes", max_bytes_);
    }
    std::unique_ptr<zip_file_t, CloseFile> file(zip_fopen_index(archive_.get(), entry, 0));
    if (!file) {
      return make_error(ErrorCode::corrupt, std::string("corrupt DOCX: cannot open the zip entry ") + name + " (" +
                                                zip_strerror(archive_.get()) + ")");
    }
    // The declared size may lie: count what is really inflated, and stop one byte past the budget.
    std::string content;
    char buffer[64 * 1024];
    for (;;) {
      const std::uint64_t room = max_bytes_ - inflated_ + 1;
      const zip_int64_t n = zip_fread(file.get(), buffer, std::min<std::uint64_t>(sizeof buffer, room));
      if (n < 0) {
        return make_error(ErrorCode::corrupt, std::string("corrupt DOCX: cannot inflate the zip entry ") + name + " (" +
                                                  zip_file_strerror(file.get()) + ")");
      }
      if (n == 0) break;
      inflated_ += static_cast<std::uint64_t>(n);
      if (inflated_ > max_bytes_) {
        return limit_error(std::string("DOCX inflates to more bytes than allowed while reading ") + name,
                           "max_decompressed_bytes", max_bytes_);
      }
      content.append(buffer, static_cast<std::size_t>(n));
    }
    return std::optional<std::string>(std::move(content));
  }

 private:
  struct Discard {
    void operator()(zip_t* archive) const { zip_discard(archive); }
  };
  struct CloseFile {
    void operator()(zip_file_t* file) const { zip_fclose(file); }
  };

  DocxArchive(zip_t* archive, std::uint64_t max_bytes) : archive_(archive), max_bytes_(max_bytes) {}

  std::unique_ptr<zip_t, Discard> archive_;
  std::uint64_t max_bytes_;
  std::uint64_t inflated_ = 0;
};

// libxml2's streaming reader over one part, with the current node's names at hand.
class PartReader {
 public:
  // Entities are not substituted and no DTD is loaded: a part cannot reach outside the archive or
  // expand itself (the "billion laughs").
  PartReader(const std::string& xml, const char* part)
      : too_large_(xml.size() > static_cast<std::size_t>(INT_MAX)),
        reader_(too_large_ ? nullptr
                           : xmlReaderForMemory(xml.data(), static_cast<int>(xml.size()), part, nullptr,
                                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)),
        part_(part) {}

  // Advances (over the current subtree when `skip_subtree`); false at the end or on an error.
  bool next(bool skip_subtree = false) {
    if (!reader_) return false;
    const int status = skip_subtree ? xmlTextReaderNext(reader_.get()) : xmlTextReaderRead(reader_.get());
    if (status < 0) failed_ = true;
    return status == 1;
  }

  int type() const { return xmlTextReaderNodeType(reader_.get()); }
  int depth() const { return xmlTextReaderDepth(reader_.get()); }
  bool empty_element() const { return xmlTextReaderIsEmptyElement(reader_.get()) == 1; }
  std::string_view local_name() const { return view(xmlTextReaderConstLocalName(reader_.get())); }
  std::string_view namespace_uri() const { return view(xmlTextReaderConstNamespaceUri(reader_.get())); }
  std::string_view value() const { return view(xmlTextReaderConstValue(reader_.get())); }
  bool is_word(std::string_view name) const { return local_name() == name && namespace_uri() == kWordNamespace; }

  // A w: attribute of the current element, "" when absent.
  std::string word_attribute(const char* name) const {
    xmlChar* value = xmlTextReaderGetAttributeNs(reader_.get(), reinterpret_cast<const xmlChar*>(name),
                                                 reinterpret_cast<const xmlChar*>(kWordNamespace.data()));
    std::string result = value == nullptr ? "" : reinterpret_cast<const char*>(value);
    xmlFree(value);
    return result;
  }

  // The error after next() returned false, if any.
  std::optional<Error> error(std::uint32_t max_depth) const {
    if (too_large_) {
      return make_error(ErrorCode::invalid_argument,
                        std::string("DOCX part ") + part_ + " is too large for libxml2 (over 2 GiB)");
    }
    if (!reader_) return make_error(ErrorCode::internal, "libxml2 could not create an XML reader");
    if (!failed_) return std::nullopt;
    const xmlError* last = xmlGetLastError();
    const std::string reason = last != nullptr && last->message != nullptr ? last->message : "malformed XML";
    if (reason.find("depth") != std::string::npos) {
      return limit_error(std::string("DOCX part ") + part_ + " nests too deep", "max_depth", max_depth);
    }
    return make_error(ErrorCode::corrupt, std::string("corrupt DOCX: ") + part_ + " is not well-formed XML (" +
                                              std::string(reason.substr(0, reason.find_last_not_of(" \n") + 1)) + ")");
  }

 private:
  static std::string_view view(const xmlChar* s) {
    return s == nullptr ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(s));
  }
  struct FreeReader {
    void operator()(xmlTextReaderPtr reader) const { xmlFreeTextReader(reader); }
  };

  bool too_large_;
  std::unique_ptr<xmlTextReader, FreeReader> reader_;
  const char* part_;
  bool failed_ = false;
};

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
  PartReader reader(xml, "word/styles.xml");
  std::string style_id;  // of the w:style being read
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (static_cast<std::uint32_t>(reader.depth()) > max_depth) {
      return limit_error("DOCX part word/styles.xml nests too deep", "max_depth", max_depth);
    }
    if (reader.is_word("style")) {
      style_id = reader.word_attribute("type") == "paragraph" ? reader.word_attribute("styleId") : "";
    } else if (!style_id.empty() && reader.is_word("name")) {
      if (const auto level = heading_level_of_style(reader.word_attribute("val"))) levels[style_id] = *level;
    } else if (!style_id.empty() && reader.is_word("outlineLvl") && !levels.contains(style_id)) {
      if (const auto level = heading_level_of_outline(reader.word_attribute("val"))) levels[style_id] = *level;
    }
  }
  if (auto error = reader.error(max_depth)) return *error;
  return levels;
}

// dc:title from docProps/core.xml, "" when absent.
std::string read_core_title(const std::string& xml) {
  PartReader reader(xml, "docProps/core.xml");
  bool in_title = false;
  std::string title;
  while (reader.next()) {
    if (reader.type() == XML_READER_TYPE_ELEMENT) {
      in_title =
          reader.local_name() == "title" && reader.namespace_uri() == kDublinCoreNamespace && !reader.empty_element();
    } else if (reader.type() == XML_READER_TYPE_END_ELEMENT) {
      if (in_title) break;
    } else if (in_title) {
      title += reader.value();
    }
  }
  return title;
}

// Walks word/document.xml and hands its blocks to the builder in reading order.
class BodyReader {
 public:
  BodyReader(DocumentBuilder& out, const StyleLevels& style_levels, std::uint32_t max_depth)
      : out_(out), style_levels_(style_levels), max_depth_(max_depth) {}

  Result<void> read(const std::string& xml) {
    PartReader reader(xml, "word/document.xml");
    bool skip_subtree = false;
    while (reader.next(skip_subtree) && !out_.stopped()) {
      skip_subtree = false;
      const int type = reader.type();
      if (type == XML_READER_TYPE_ELEMENT) {
        if (static_cast<std::uint32_t>(reader.depth()) > max_depth_) {
          return limit_error("DOCX part word/document.xml nests too deep", "max_depth", max_depth_);
        }
        // mc:Fallback repeats the mc:Choice content (text boxes drawn twice) for older readers.
        if (reader.local_name() == "Fallback" && reader.namespace_uri() == kMarkupCompatibilityNamespace) {
          skip_subtree = true;
          continue;
        }
        if (reader.namespace_uri() == kWordNamespace) start_element(reader);
      } else if (type == XML_READER_TYPE_END_ELEMENT) {
        if (reader.namespace_uri() == kWordNamespace) end_element(reader.local_name());
      } else if (in_text_ && (type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA ||
                              type == XML_READER_TYPE_WHITESPACE || type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE)) {
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
  struct Row {
    std::vector<std::string> cells;
  };

  void start_element(const PartReader& reader) {
    const std::string_view name = reader.local_name();
    const bool empty = reader.empty_element();
    if (name == "p") {
      if (!empty) paragraphs_.emplace_back();
    } else if (name == "tr") {
      if (!empty) rows_.emplace_back();
    } else if (name == "tc") {
      if (!rows_.empty()) rows_.back().cells.emplace_back();
    } else if (name == "r") {
      if (!empty) ++runs_;
    } else if (name == "t") {
      in_text_ = !empty && runs_ > 0;
    } else if (paragraphs_.empty()) {
      return;
    } else if (name == "pStyle") {
      const std::string style = reader.word_attribute("val");
      const auto found = style_levels_.find(style);
      paragraphs_.back().heading_level =
          found != style_levels_.end() ? std::optional<int>(found->second) : heading_level_of_style(style);
    } else if (name == "outlineLvl" && !paragraphs_.back().heading_level) {
      paragraphs_.back().heading_level = heading_level_of_outline(reader.word_attribute("val"));
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
    } else if (name == "tr" && !rows_.empty()) {
      std::string row;
      for (const auto& cell : rows_.back().cells) {
        const std::string text = normalise_line(cell);
        if (text.empty()) continue;
        if (!row.empty()) row += " | ";
        row += text;
      }
      rows_.pop_back();
      if (!rows_.empty() && !rows_.back().cells.empty()) {
        rows_.back().cells.back() += ' ' + row;  // a nested table reads as part of its cell
      } else {
        out_.add_paragraph(row);
      }
    }
  }

  void end_paragraph(Paragraph paragraph) {
    if (!rows_.empty() && !rows_.back().cells.empty()) {
      rows_.back().cells.back() += ' ' + paragraph.text;
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
  std::vector<Row> rows_;              // open table rows, innermost last
  int runs_ = 0;
  bool in_text_ = false;
  std::string title_paragraph_;
};

}  // namespace

Result<Document> load_docx(std::string_view bytes, const LoadLimits& limits) {
  auto archive = DocxArchive::open(bytes, limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;

  auto body = archive->read("word/document.xml");
  if (!body) return body.error();
  if (!*body) return make_error(ErrorCode::corrupt, "corrupt DOCX: the archive has no word/document.xml");

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
  if (auto read = reader.read(**body); !read) return read.error();

  std::string title = reader.title_paragraph();
  if (title.empty()) {
    auto core = archive->read("docProps/core.xml");
    if (!core) return core.error();
    if (*core) title = read_core_title(**core);
  }
  return std::move(builder).finish("docx", std::move(title), 0);
}

}  // namespace kotae::text
