#include "text/loaders/xml_part.h"

#include <climits>

#include "text/document_metadata.h"
#include "text/loaders/document_builder.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {

XmlPart::XmlPart(const std::string& xml, std::string_view kind, std::string_view part)
    : too_large_(xml.size() > static_cast<std::size_t>(INT_MAX)),
      reader_(too_large_ ? nullptr
                         : xmlReaderForMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr,
                                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)),
      kind_(kind),
      part_(part) {}

bool XmlPart::next(bool skip_subtree) {
  if (!reader_) return false;
  const int status = skip_subtree ? xmlTextReaderNext(reader_.get()) : xmlTextReaderRead(reader_.get());
  if (status < 0) failed_ = true;
  return status == 1;
}

bool XmlPart::is_text() const {
  const int t = type();
  return t == XML_READER_TYPE_TEXT || t == XML_READER_TYPE_CDATA || t == XML_READER_TYPE_WHITESPACE ||
         t == XML_READER_TYPE_SIGNIFICANT_WHITESPACE;
}

std::string XmlPart::attribute(const char* name, std::string_view namespace_uri) const {
  const std::string ns(namespace_uri);
  xmlChar* value = ns.empty() ? xmlTextReaderGetAttribute(reader_.get(), reinterpret_cast<const xmlChar*>(name))
                              : xmlTextReaderGetAttributeNs(reader_.get(), reinterpret_cast<const xmlChar*>(name),
                                                            reinterpret_cast<const xmlChar*>(ns.c_str()));
  std::string result = value == nullptr ? "" : reinterpret_cast<const char*>(value);
  xmlFree(value);
  return result;
}

std::optional<Error> XmlPart::too_deep(std::uint32_t max_depth) const {
  if (static_cast<std::uint32_t>(depth()) <= max_depth) return std::nullopt;
  return limit_error(std::string(kind_) + " part " + std::string(part_) + " nests too deep", "max_depth", max_depth);
}

std::optional<Error> XmlPart::error(std::uint32_t max_depth) const {
  const std::string where = std::string(kind_) + " part " + std::string(part_);
  if (too_large_) return make_error(ErrorCode::invalid_argument, where + " is too large for libxml2 (over 2 GiB)");
  if (!reader_) return make_error(ErrorCode::internal, "libxml2 could not create an XML reader");
  if (!failed_) return std::nullopt;
  const xmlError* last = xmlGetLastError();
  const std::string reason = last != nullptr && last->message != nullptr ? last->message : "malformed XML";
  if (reason.find("depth") != std::string::npos) return limit_error(where + " nests too deep", "max_depth", max_depth);
  return make_error(ErrorCode::corrupt, "corrupt " + std::string(kind_) + ": " + std::string(part_) +
                                            " is not well-formed XML (" +
                                            reason.substr(0, reason.find_last_not_of(" \n") + 1) + ")");
}

std::string dublin_core_title(const std::string& xml, std::string_view kind, std::string_view part) {
  return read_core_properties(xml, kind, part).title;
}

CoreProperties read_core_properties(const std::string& xml, std::string_view kind, std::string_view part) {
  constexpr std::string_view kDublinCore = "http://purl.org/dc/elements/1.1/";
  constexpr std::string_view kTerms = "http://purl.org/dc/terms/";
  constexpr std::string_view kOdfMeta = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0";
  constexpr std::size_t kMaxPropertyBytes = 4096;  // of one element's text, before it is cleaned
  XmlPart reader(xml, kind, part);
  std::string title, creator, initial_creator, created, creation_date, modified;
  std::string* in = nullptr;  // the property whose element is open
  while (reader.next()) {
    if (reader.type() == XML_READER_TYPE_ELEMENT) {
      in = nullptr;
      if (reader.empty_element()) continue;
      if (reader.is("title", kDublinCore)) in = &title;
      if (reader.is("creator", kDublinCore)) in = &creator;
      if (reader.is("initial-creator", kOdfMeta)) in = &initial_creator;
      if (reader.is("created", kTerms)) in = &created;
      if (reader.is("creation-date", kOdfMeta)) in = &creation_date;
      if (reader.is("modified", kTerms)) in = &modified;
      if (in != nullptr && !in->empty()) in = nullptr;  // the first of each counts
    } else if (reader.type() == XML_READER_TYPE_END_ELEMENT) {
      in = nullptr;
    } else if (in != nullptr && reader.is_text() && in->size() < kMaxPropertyBytes) {
      *in += reader.value().substr(0, kMaxPropertyBytes - in->size());
    }
  }
  CoreProperties properties;
  properties.title = normalise_line(title);
  properties.author = normalise_line(initial_creator.empty() ? creator : initial_creator);
  properties.created = normalise_iso_date(normalise_line(created.empty() ? creation_date : created));
  properties.modified = normalise_iso_date(normalise_line(modified));
  return properties;
}

void add_core_properties(const CoreProperties& p, std::vector<std::pair<std::string, std::string>>& metadata) {
  for (const auto& [key, value] : {std::pair<const char*, const std::string&>{"title", p.title},
                                   {"author", p.author},
                                   {"created", p.created},
                                   {"modified", p.modified}}) {
    if (!value.empty()) metadata.emplace_back(key, value);
  }
}

}  // namespace kotae::text
