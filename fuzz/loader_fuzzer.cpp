// One loader fuzz target per format: the same source, built with KOTAE_FUZZ_FORMAT set to "html",
// "pdf", "docx", "pptx", "odt", "epub", "xlsx", "ods", "csv", "eml", "mbox" or "md" (fuzz/CMakeLists.txt). The input is
// a whole file. Every input must give a Document that keeps its contract or an Error; never a crash, a leak, UB or a
// hang. The zip formats: an input that is not a zip ("PK...") is the XML of the parts the loader walks, separated by
// NUL bytes, zipped here with stored entries (and, for PPTX, the fixed parts that lead to them), so that mutations
// reach our XML walk rather than stop at libzip's checksums:
//   docx: word/document.xml, word/styles.xml, docProps/core.xml
//   pptx: ppt/slides/slide1.xml, ppt/notesSlides/notesSlide1.xml, docProps/core.xml
//   odt:  content.xml, meta.xml
//   xlsx: xl/worksheets/sheet1.xml, xl/sharedStrings.xml, xl/styles.xml (the workbook fixed)
//   ods:  content.xml, meta.xml
//   epub: OEBPS/content.opf, OEBPS/ch1.xhtml (META-INF/container.xml fixed)

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/document_contract.h"
#include "fuzz/stored_zip.h"
#include "text/loaders/loader.h"

namespace {

// The parts an input's NUL-separated pieces become, in order (none: the format is not a zip).
std::vector<const char*> zip_parts(std::string_view format) {
  if (format == "docx") return {"word/document.xml", "word/styles.xml", "docProps/core.xml"};
  if (format == "pptx") return {"ppt/slides/slide1.xml", "ppt/notesSlides/notesSlide1.xml", "docProps/core.xml"};
  if (format == "odt" || format == "ods") return {"content.xml", "meta.xml"};
  if (format == "xlsx") return {"xl/worksheets/sheet1.xml", "xl/sharedStrings.xml", "xl/styles.xml"};
  if (format == "epub") return {"OEBPS/content.opf", "OEBPS/ch1.xhtml"};
  return {};
}

// The parts that lead the loader to the fuzzed ones: PPTX's presentation to its slide and notes,
// XLSX's workbook to its sheet, EPUB's container to its package document.
std::vector<std::pair<std::string, std::string_view>> fixed_parts(std::string_view format) {
  if (format == "epub") {
    return {{"META-INF/container.xml",
             R"(<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>)"
             R"(<rootfile full-path="OEBPS/content.opf"/></rootfiles></container>)"}};
  }
  if (format == "xlsx") {
    return {
        {"xl/workbook.xml", R"(<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" )"
                            R"(xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">)"
                            R"(<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>)"},
        {"xl/_rels/workbook.xml.rels",
         R"(<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">)"
         R"(<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" )"
         R"(Target="worksheets/sheet1.xml"/></Relationships>)"}};
  }
  if (format != "pptx") return {};
  return {
      {"ppt/presentation.xml",
       R"(<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" )"
       R"(xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">)"
       R"(<p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>)"},
      {"ppt/_rels/presentation.xml.rels",
       R"(<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">)"
       R"(<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" )"
       R"(Target="slides/slide1.xml"/></Relationships>)"},
      {"ppt/slides/_rels/slide1.xml.rels",
       R"(<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">)"
       R"(<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" )"
       R"(Target="../notesSlides/notesSlide1.xml"/></Relationships>)"},
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Lower than the defaults so one input stays fast; the limit checks themselves are exercised too.
  kotae::text::LoadLimits limits;
  limits.max_file_bytes = 1 << 20;
  limits.max_pages = 16;
  limits.max_decompressed_bytes = 4 << 20;
  limits.max_depth = 64;
  limits.max_text_bytes = 1 << 20;
  limits.ocr_languages = "";  // Tesseract is not ours to fuzz (and takes seconds a page): a scan reads as no text
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string zipped;
  const std::string_view format = KOTAE_FUZZ_FORMAT;
  const auto parts = zip_parts(format);
  if (!parts.empty() && !bytes.starts_with("PK")) {
    std::vector<std::pair<std::string, std::string_view>> entries = fixed_parts(format);
    for (const char* name : parts) {
      const auto nul = bytes.find('\0');
      entries.emplace_back(name, bytes.substr(0, nul));
      if (nul == std::string_view::npos) break;
      bytes.remove_prefix(nul + 1);
    }
    zipped = kotae::fuzz::stored_zip(entries);
    bytes = zipped;
  }
  auto doc = kotae::text::load_document_bytes(bytes, KOTAE_FUZZ_FORMAT, limits);
  if (doc) {
    KOTAE_ASSERT(doc->format == KOTAE_FUZZ_FORMAT);
    kotae::fuzz::check_document_contract(*doc);
  } else {
    KOTAE_ASSERT(!doc.error().message.empty());
  }
  return 0;
}
