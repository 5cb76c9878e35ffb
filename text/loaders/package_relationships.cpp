#include "text/loaders/package_relationships.h"

#include "text/loaders/xml_part.h"

namespace kotae::text {
namespace {

constexpr std::string_view kRelationships = "http://schemas.openxmlformats.org/package/2006/relationships";

std::string rels_of(std::string_view part) {
  const auto slash = part.rfind('/');
  const std::string folder = zip_folder_of(part);
  return (folder.empty() ? "" : folder + "/") + "_rels/" +
         std::string(slash == std::string_view::npos ? part : part.substr(slash + 1)) + ".rels";
}

}  // namespace

Result<Relationships> read_relationships(ZipArchive& archive, std::string_view part, std::string_view kind,
                                         std::uint32_t max_depth) {
  Relationships found;
  const std::string rels = rels_of(part);
  auto xml = archive.read(rels);
  if (!xml) return xml.error();
  if (!*xml) return found;
  XmlPart reader(**xml, kind, rels);
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (auto deep = reader.too_deep(max_depth)) return *deep;
    if (!reader.is("Relationship", kRelationships) || reader.attribute("TargetMode") == "External") continue;
    std::string type = reader.attribute("Type");
    type.erase(0, type.rfind('/') + 1);
    found[reader.attribute("Id")] = {std::move(type),
                                     resolve_zip_path(zip_folder_of(part), reader.attribute("Target"))};
  }
  if (auto error = reader.error(max_depth)) return *error;
  return found;
}

}  // namespace kotae::text
