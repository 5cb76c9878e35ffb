#include "text/loaders/xml_part.h"

#include <climits>

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
  constexpr std::string_view kDublinCore = "http://purl.org/dc/elements/1.1/";
  XmlPart reader(xml, kind, part);
  bool in_title = false;
  std::string title;
  while (reader.next()) {
    if (reader.type() == XML_READER_TYPE_ELEMENT) {
      in_title = reader.is("title", kDublinCore) && !reader.empty_element();
    } else if (reader.type() == XML_READER_TYPE_END_ELEMENT) {
      if (in_title) break;
    } else if (in_title) {
      title += reader.value();
    }
  }
  return normalise_line(title);
}

}  // namespace kotae::text
