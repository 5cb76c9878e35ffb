#pragma once
// libxml2's streaming reader over one XML part of a zip-based document (word/document.xml,
// ppt/slides/slide1.xml, content.xml), with the current node's names at hand. Entities are not
// substituted and no DTD is loaded: a part cannot reach outside the archive or expand itself (the
// "billion laughs"). Errors name the format and the part. Callers hold a QuietLibxml while reading.

#include <libxml/xmlreader.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace kotae::text {

class XmlPart {
 public:
  // `kind` ("DOCX") and `part` ("word/document.xml") name the part in errors; both must outlive this.
  XmlPart(const std::string& xml, std::string_view kind, std::string_view part);

  // Advances (over the current subtree when `skip_subtree`); false at the end or on an error.
  bool next(bool skip_subtree = false);

  int type() const { return xmlTextReaderNodeType(reader_.get()); }
  int depth() const { return xmlTextReaderDepth(reader_.get()); }
  bool empty_element() const { return xmlTextReaderIsEmptyElement(reader_.get()) == 1; }
  std::string_view local_name() const { return view(xmlTextReaderConstLocalName(reader_.get())); }
  std::string_view namespace_uri() const { return view(xmlTextReaderConstNamespaceUri(reader_.get())); }
  std::string_view value() const { return view(xmlTextReaderConstValue(reader_.get())); }
  bool is(std::string_view name, std::string_view namespace_uri) const {
    return local_name() == name && this->namespace_uri() == namespace_uri;
  }
  bool is_text() const;  // text, CDATA or whitespace inside an element

  // An attribute of the current element in `namespace_uri` ("" for none), "" when absent.
  std::string attribute(const char* name, std::string_view namespace_uri = {}) const;

  // The invalid_argument error when the current element is deeper than `max_depth`.
  std::optional<Error> too_deep(std::uint32_t max_depth) const;

  // The error after next() returned false, if any.
  std::optional<Error> error(std::uint32_t max_depth) const;

 private:
  static std::string_view view(const xmlChar* s) {
    return s == nullptr ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(s));
  }
  struct FreeReader {
    void operator()(xmlTextReaderPtr reader) const { xmlFreeTextReader(reader); }
  };

  bool too_large_;
  std::unique_ptr<xmlTextReader, FreeReader> reader_;
  std::string_view kind_;
  std::string_view part_;
  bool failed_ = false;
};

// dc:title of a Dublin Core metadata part (DOCX/PPTX docProps/core.xml, ODT meta.xml), one line, ""
// when absent or unreadable (the title is a nicety: the document loads without it).
std::string dublin_core_title(const std::string& xml, std::string_view kind, std::string_view part);

// What a metadata part says of its document, each one line ("" when absent, unreadable or, for a
// date, not ISO 8601): dc:title; meta:initial-creator, else dc:creator; dcterms:created, else
// meta:creation-date; dcterms:modified.
struct CoreProperties {
  std::string title, author, created, modified;
};
CoreProperties read_core_properties(const std::string& xml, std::string_view kind, std::string_view part);
// Adds them to the document's metadata as title, author, created and modified (the empty ones left out).
void add_core_properties(const CoreProperties& properties, std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace kotae::text
