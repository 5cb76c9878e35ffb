#pragma once
// The relationships of a part of an Office Open XML package (PPTX, XLSX): its _rels/NAME.rels part,
// which names the parts it links to (a presentation's slides, a workbook's sheets) by id.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {

// r:id attributes (a slide's, a sheet's) are in this namespace.
constexpr std::string_view kRelationshipIds = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

struct Relationship {
  std::string type;    // the last segment of the type URI: "slide", "notesSlide", "worksheet"
  std::string target;  // the part's path in the archive
};
using Relationships = std::map<std::string, Relationship, std::less<>>;

// Id -> relationship of `part`, from its .rels part (none when it has no such part); external
// targets are left out. `kind` ("PPTX") names the format in errors.
Result<Relationships> read_relationships(ZipArchive& archive, std::string_view part, std::string_view kind,
                                         std::uint32_t max_depth);

}  // namespace kotae::text
