#pragma once
// Office and e-book files for tests, as their formats lay them out: the parts of a PPTX (presentation,
// relationships, slides with shapes and tables), of an XLSX (workbook, sheets, shared strings, styles),
// of an ODS (content.xml) and of an EPUB (container, package, chapters), to zip with write_zip. Just what Kotae's
// loaders read, and nothing generated is committed.

#include <string>
#include <utility>
#include <vector>

namespace kotae::testing {

using ZipParts = std::vector<std::pair<std::string, std::string>>;

inline const std::string kPptxNamespaces =
    R"(xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" )"
    R"(xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" )"
    R"(xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships")";
inline const std::string kRelationshipType = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/";

inline std::string pptx_relationships(const std::vector<std::pair<std::string, std::string>>& targets,
                                      const std::string& type) {
  std::string xml = R"(<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">)";
  for (const auto& [id, target] : targets) {
    xml += "<Relationship Id=\"" + id + "\" Type=\"" + kRelationshipType + type + "\" Target=\"" + target + "\"/>";
  }
  return xml + "</Relationships>";
}

// A shape at (x, y) with one paragraph per text; `placeholder` is its p:ph type ("" for none).
inline std::string pptx_shape(const std::vector<std::string>& paragraphs, long y, long x = 0,
                              const std::string& placeholder = "") {
  std::string xml = "<p:sp><p:nvSpPr><p:cNvPr id=\"1\" name=\"s\"/><p:cNvSpPr/><p:nvPr>";
  if (!placeholder.empty()) xml += "<p:ph type=\"" + placeholder + "\"/>";
  xml += "</p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) +
         "\"/><a:ext cx=\"10\" cy=\"10\"/></a:xfrm></p:spPr><p:txBody>";
  for (const auto& text : paragraphs) xml += "<a:p><a:r><a:t>" + text + "</a:t></a:r></a:p>";
  return xml + "</p:txBody></p:sp>";
}

inline std::string pptx_table(const std::vector<std::vector<std::string>>& rows) {
  std::string xml = "<p:graphicFrame><p:xfrm><a:off x=\"0\" y=\"9000\"/></p:xfrm><a:graphic><a:graphicData><a:tbl>";
  for (const auto& row : rows) {
    xml += "<a:tr>";
    for (const auto& cell : row)
      xml += "<a:tc><a:txBody><a:p><a:r><a:t>" + cell + "</a:t></a:r></a:p></a:txBody></a:tc>";
    xml += "</a:tr>";
  }
  return xml + "</a:tbl></a:graphicData></a:graphic></p:graphicFrame>";
}

inline std::string pptx_slide(const std::string& shapes) {
  return "<p:sld " + kPptxNamespaces + "><p:cSld><p:spTree>" + shapes + "</p:spTree></p:cSld></p:sld>";
}

// A presentation of `slides` (in list order); slide i is ppt/slides/slideN.xml with N = files[i].
inline ZipParts pptx_presentation(const std::vector<std::pair<int, std::string>>& slides) {
  std::string list;
  std::vector<std::pair<std::string, std::string>> targets;
  ZipParts parts;
  for (const auto& [file, xml] : slides) {
    const std::string id = "rId" + std::to_string(file);
    list += "<p:sldId id=\"" + std::to_string(255 + file) + "\" r:id=\"" + id + "\"/>";
    targets.emplace_back(id, "slides/slide" + std::to_string(file) + ".xml");
    parts.emplace_back("ppt/slides/slide" + std::to_string(file) + ".xml", xml);
  }
  parts.emplace_back("ppt/presentation.xml",
                     "<p:presentation " + kPptxNamespaces + "><p:sldIdLst>" + list + "</p:sldIdLst></p:presentation>");
  parts.emplace_back("ppt/_rels/presentation.xml.rels", pptx_relationships(targets, "slide"));
  return parts;
}

inline const std::string kSpreadsheetNamespace = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

// A workbook of `sheets` (name, the rows of its sheetData) in list order. Cell styles: s="1" shows a
// date (built-in format 14), s="2" a date and time (a custom "dd/mm/yyyy hh:mm"), s="3" a number with
// two decimals (built-in 2: no date).
inline ZipParts xlsx_workbook(const std::vector<std::pair<std::string, std::string>>& sheets,
                              const std::vector<std::string>& shared_strings = {}, bool date1904 = false) {
  ZipParts parts;
  std::string list;
  std::vector<std::pair<std::string, std::string>> targets;
  int n = 0;
  for (const auto& [name, rows] : sheets) {
    const std::string id = "rId" + std::to_string(++n);
    list += "<sheet name=\"" + name + "\" sheetId=\"" + std::to_string(n) + "\" r:id=\"" + id + "\"/>";
    targets.emplace_back(id, "worksheets/sheet" + std::to_string(n) + ".xml");
    parts.emplace_back(
        "xl/worksheets/sheet" + std::to_string(n) + ".xml",
        "<worksheet xmlns=\"" + kSpreadsheetNamespace + "\"><sheetData>" + rows + "</sheetData></worksheet>");
  }
  parts.emplace_back("xl/workbook.xml", "<workbook xmlns=\"" + kSpreadsheetNamespace +
                                            "\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/"
                                            "relationships\"><workbookPr date1904=\"" +
                                            (date1904 ? "1" : "0") + "\"/><sheets>" + list + "</sheets></workbook>");
  parts.emplace_back("xl/_rels/workbook.xml.rels", pptx_relationships(targets, "worksheet"));
  std::string strings = "<sst xmlns=\"" + kSpreadsheetNamespace + "\">";
  for (const auto& text : shared_strings) strings += "<si><t>" + text + "</t></si>";
  parts.emplace_back("xl/sharedStrings.xml", strings + "</sst>");
  parts.emplace_back("xl/styles.xml", "<styleSheet xmlns=\"" + kSpreadsheetNamespace +
                                          "\"><numFmts count=\"1\"><numFmt numFmtId=\"164\" "
                                          "formatCode=\"dd/mm/yyyy\\ hh:mm\"/></numFmts><cellXfs count=\"4\">"
                                          "<xf numFmtId=\"0\"/><xf numFmtId=\"14\"/><xf numFmtId=\"164\"/>"
                                          "<xf numFmtId=\"2\"/></cellXfs></styleSheet>");
  return parts;
}

inline const std::string kOdsNamespaces = R"(xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" )"
                                          R"(xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" )"
                                          R"(xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0")";

// An ODS's content.xml whose spreadsheet holds `tables` (table:table elements).
inline std::string ods_content(const std::string& tables) {
  return "<office:document-content " + kOdsNamespaces + "><office:body><office:spreadsheet>" + tables +
         "</office:spreadsheet></office:body></office:document-content>";
}

// An EPUB whose package sits in OEBPS/ and lists `chapters` (file name, XHTML body) in spine order.
inline ZipParts epub_book(const std::vector<std::pair<std::string, std::string>>& chapters,
                          const std::string& title = "") {
  std::string manifest, spine;
  ZipParts parts;
  parts.emplace_back("mimetype", "application/epub+zip");
  parts.emplace_back("META-INF/container.xml",
                     R"(<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles>)"
                     R"(<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>)"
                     R"(</rootfiles></container>)");
  int n = 0;
  for (const auto& [file, body] : chapters) {
    const std::string id = std::string("c").append(std::to_string(++n));
    manifest += "<item id=\"" + id + "\" href=\"" + file + "\" media-type=\"application/xhtml+xml\"/>";
    spine += "<itemref idref=\"" + id + "\"/>";
    parts.emplace_back(
        "OEBPS/" + file,
        R"(<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>)" + body + "</body></html>");
  }
  manifest += R"(<item id="css" href="style.css" media-type="text/css"/>)";
  parts.emplace_back(
      "OEBPS/content.opf",
      R"(<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">)" +
          (title.empty() ? "" : "<dc:title>" + title + "</dc:title>") + "</metadata><manifest>" + manifest +
          "</manifest><spine>" + spine + "</spine></package>");
  return parts;
}

}  // namespace kotae::testing
