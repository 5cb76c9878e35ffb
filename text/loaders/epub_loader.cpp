// EPUB to text: the zip through ZipArchive; META-INF/container.xml names the package document (OPF),
// whose spine lists the chapters (XHTML) in reading order, each read by the HTML loader's reading
// (html_reader.h) into one document. Chapters are headings as their own h1-h6 make them; each chapter
// starts under no heading, so a chapter without one is not filed under the last chapter's. The title
// is the package's dc:title, else the first heading. The chapter count is bounded by max_pages.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/html_reader.h"
#include "text/loaders/quiet_libxml.h"
#include "text/loaders/xml_part.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {
namespace {

constexpr std::string_view kContainer = "urn:oasis:names:tc:opendocument:xmlns:container";
constexpr std::string_view kPackage = "http://www.idpf.org/2007/opf";

// The package document's path, from META-INF/container.xml's first rootfile.
Result<std::string> read_package_path(ZipArchive& archive, std::uint32_t max_depth) {
  constexpr std::string_view kPart = "META-INF/container.xml";
  auto xml = archive.read_required(kPart);
  if (!xml) return xml.error();
  XmlPart reader(*xml, "EPUB", kPart);
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (auto deep = reader.too_deep(max_depth)) return *deep;
    if (reader.is("rootfile", kContainer)) {
      std::string path = resolve_zip_path("", reader.attribute("full-path"));
      if (!path.empty()) return path;
    }
  }
  if (auto error = reader.error(max_depth)) return *error;
  return make_error(ErrorCode::corrupt, "corrupt EPUB: META-INF/container.xml names no package document");
}

// The chapters' paths in spine order (items that are not XHTML or HTML are left out).
Result<std::vector<std::string>> read_spine(const std::string& xml, std::string_view package,
                                            const LoadLimits& limits) {
  XmlPart reader(xml, "EPUB", package);
  std::map<std::string, std::string, std::less<>> documents;  // manifest id -> path of an (X)HTML item
  std::vector<std::string> order;                             // spine idrefs
  const std::string folder = zip_folder_of(package);
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (auto deep = reader.too_deep(limits.max_depth)) return *deep;
    if (reader.is("item", kPackage)) {
      const std::string type = reader.attribute("media-type");
      if (type == "application/xhtml+xml" || type == "text/html") {
        documents[reader.attribute("id")] = resolve_zip_path(folder, reader.attribute("href"));
      }
    } else if (reader.is("itemref", kPackage)) {
      if (order.size() == limits.max_pages) {
        return limit_error("EPUB has more chapters than allowed", "max_pages", limits.max_pages);
      }
      order.push_back(reader.attribute("idref"));
    }
  }
  if (auto error = reader.error(limits.max_depth)) return *error;
  std::vector<std::string> chapters;
  for (const auto& id : order) {
    if (const auto found = documents.find(id); found != documents.end()) chapters.push_back(found->second);
  }
  return chapters;
}

}  // namespace

Result<Document> load_epub(std::string_view bytes, const LoadLimits& limits) {
  auto archive = ZipArchive::open(bytes, "EPUB", limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;
  auto package = read_package_path(*archive, limits.max_depth);
  if (!package) return package.error();
  auto opf = archive->read(*package);
  if (!opf) return opf.error();
  if (!*opf) return make_error(ErrorCode::corrupt, "corrupt EPUB: the package document " + *package + " is missing");
  auto chapters = read_spine(**opf, *package, limits);
  if (!chapters) return chapters.error();

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  for (const std::string& chapter : *chapters) {
    if (builder.stopped()) break;
    auto xhtml = archive->read(chapter);
    if (!xhtml) return xhtml.error();
    if (!*xhtml) return make_error(ErrorCode::corrupt, "corrupt EPUB: the chapter " + chapter + " is missing");
    builder.close_headings();
    if (auto read = read_html(builder, **xhtml, limits); !read) {
      return make_error(read.error().code, "EPUB chapter " + chapter + ": " + read.error().message);
    }
  }
  return std::move(builder).finish("epub", dublin_core_title(**opf, "EPUB", *package), 0);
}

}  // namespace kotae::text
