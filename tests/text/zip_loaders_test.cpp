// The zip-packaged formats PPTX, ODT and EPUB, built for real in each test (zipped with libzip): reading
// order, slides as pages, chapters, headings, tables, speaker notes, titles, and the limits that stop
// hostile files.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/office_files.h"
#include "support/test_data.h"
#include "support/write_zip.h"
#include "text/loaders/loader.h"

namespace kotae::text {
namespace {

namespace fs = std::filesystem;
using Parts = testing::ZipParts;
using namespace kotae::testing;  // the office file builders

class ZipLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("kotae-zip-loaders"); }
  fs::path zip(const std::string& name, const Parts& parts) {
    const fs::path path = dir_ / name;
    testing::write_zip(path, parts);
    return path;
  }
  // The text of the segment that holds `needle`, and that segment's page and heading path.
  static const TextSegment& segment_of(const Document& doc, const std::string& needle) {
    const auto at = doc.text.find(needle);
    EXPECT_NE(at, std::string::npos) << needle << " not in: " << doc.text;
    for (const auto& s : doc.segments) {
      if (s.begin <= at && at < s.end) return s;
    }
    ADD_FAILURE() << "no segment holds " << needle;
    return doc.segments.front();
  }
  fs::path dir_;
};

TEST_F(ZipLoaderTest, PptxReadsSlidesInPresentationOrderEachAPage) {
  // slide2.xml is listed first: the list decides, not the file names.
  auto parts = pptx_presentation({
      {2, pptx_slide(pptx_shape({"Opening"}, 0, 0, "title") + pptx_shape({"Why we are here."}, 500))},
      {1, pptx_slide(pptx_shape({"Closing"}, 0, 0, "title") + pptx_shape({"Thank you all."}, 500))},
  });
  auto doc = load_document(zip("deck.pptx", parts));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "pptx");
  EXPECT_EQ(doc->pages, 2u);
  EXPECT_LT(doc->text.find("Opening"), doc->text.find("Closing")) << doc->text;
  EXPECT_EQ(segment_of(*doc, "Why we are here.").page, 1u);
  EXPECT_EQ(segment_of(*doc, "Thank you all.").page, 2u);
  EXPECT_EQ(segment_of(*doc, "Thank you all.").heading_path, std::vector<std::string>{"Closing"});
  EXPECT_EQ(doc->title, "Opening");  // no docProps/core.xml: the first slide's title
}

TEST_F(ZipLoaderTest, PptxPutsTheTitleFirstThenShapesTopToBottomLeftToRight) {
  const std::string shapes = pptx_shape({"Bottom left."}, 900, 0) + pptx_shape({"Top right."}, 100, 800) +
                             pptx_shape({"Top left."}, 100, 0) + pptx_shape({"The title"}, 5000, 0, "title");
  auto doc = load_document(zip("order.pptx", pptx_presentation({{1, pptx_slide(shapes)}})));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->text, "The title\n\nTop left.\n\nTop right.\n\nBottom left.");
}

TEST_F(ZipLoaderTest, PptxReadsTablesRowByRowAndTheSpeakerNotes) {
  auto parts =
      pptx_presentation({{1, pptx_slide(pptx_shape({"Results"}, 0, 0, "title") +
                                        pptx_table({{"Region", "Growth"}, {"North", "12%"}, {"South", "7%"}}))}});
  parts.emplace_back("ppt/slides/_rels/slide1.xml.rels",
                     pptx_relationships({{"rId9", "../notesSlides/notesSlide1.xml"}}, "notesSlide"));
  parts.emplace_back("ppt/notesSlides/notesSlide1.xml",
                     "<p:notes " + kPptxNamespaces + "><p:cSld><p:spTree>" +
                         pptx_shape({"slide image text"}, 0, 0, "sldImg") +
                         pptx_shape({"Say the South had a late start."}, 10, 0, "body") +
                         pptx_shape({"1"}, 20, 0, "sldNum") + "</p:spTree></p:cSld></p:notes>");
  auto doc = load_document(zip("table.pptx", parts));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->text,
            "Results\n\n| Region | Growth |\n| --- | --- |\n| North | 12% |\n| South | 7% |\n\nSay the South had a "
            "late start.");
  EXPECT_EQ(segment_of(*doc, "| South").row, 3u);
  EXPECT_EQ(segment_of(*doc, "Say the South").page, 1u);
}

TEST_F(ZipLoaderTest, PptxTitlesAreOneHeadingEachAndASlideWithoutOneIsUnderNone) {
  auto parts = pptx_presentation(
      {{1, pptx_slide(pptx_shape({"First deck slide"}, 0, 0, "ctrTitle"))},
       {3, pptx_slide(pptx_shape({"Results", "by region"}, 0, 0, "title") + pptx_shape({"North grew most."}, 500))},
       {2, pptx_slide(pptx_shape({"A slide of its own."}, 10))}});
  parts.emplace_back(
      "docProps/core.xml",
      R"(<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" )"
      R"(xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Quarterly review</dc:title></cp:coreProperties>)");
  auto doc = load_document(zip("core.pptx", parts));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->title, "Quarterly review");
  EXPECT_TRUE(segment_of(*doc, "A slide of its own.").heading_path.empty());
  // A title set over two paragraphs is one heading.
  EXPECT_EQ(segment_of(*doc, "North grew most.").heading_path, std::vector<std::string>{"Results by region"});
}

TEST_F(ZipLoaderTest, PptxHostileFilesGetClearErrors) {
  LoadLimits limits;
  limits.max_pages = 3;
  std::vector<std::pair<int, std::string>> many;
  for (int i = 1; i <= 4; ++i) many.emplace_back(i, pptx_slide(pptx_shape({"Slide " + std::to_string(i)}, 0)));
  auto too_many = load_document(zip("many.pptx", pptx_presentation(many)), limits);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("max_pages"), std::string::npos) << too_many.error().message;

  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<p:grpSp>";
  for (int i = 0; i < 300; ++i) deep += "</p:grpSp>";
  auto nested = load_document(zip("deep.pptx", pptx_presentation({{1, pptx_slide(deep)}})));
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("max_depth"), std::string::npos) << nested.error().message;

  limits = {};
  limits.max_decompressed_bytes = 64 << 10;
  auto bomb = load_document(
      zip("bomb.pptx", pptx_presentation({{1, pptx_slide(pptx_shape({std::string(200000, 'a')}, 0))}})), limits);
  ASSERT_FALSE(bomb);
  EXPECT_NE(bomb.error().message.find("max_decompressed_bytes"), std::string::npos) << bomb.error().message;

  auto no_main = load_document(zip("no-main.pptx", {{"ppt/slides/slide1.xml", pptx_slide("")}}));
  ASSERT_FALSE(no_main);
  EXPECT_NE(no_main.error().message.find("corrupt PPTX"), std::string::npos) << no_main.error().message;

  auto parts = pptx_presentation({{1, pptx_slide(pptx_shape({"here"}, 0))}});
  parts.erase(parts.begin());  // the slide itself
  auto missing = load_document(zip("missing.pptx", parts));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("ppt/slides/slide1.xml"), std::string::npos) << missing.error().message;
}

const std::string kOdtNamespaces = R"(xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" )"
                                   R"(xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" )"
                                   R"(xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0")";

std::string odt_content(const std::string& body) {
  return "<office:document-content " + kOdtNamespaces + "><office:body><office:text>" + body +
         "</office:text></office:body></office:document-content>";
}

TEST_F(ZipLoaderTest, OdtReadsHeadingsParagraphsListsAndTables) {
  const std::string body =
      R"(<text:h text:outline-level="1">Handbook</text:h>)"
      R"(<text:p>Welcome<text:s text:c="3"/>aboard<text:tab/>team.<office:annotation><text:p>a reviewer's comment</text:p></office:annotation></text:p>)"
      R"(<text:h text:outline-level="2">Leave</text:h>)"
      R"(<text:list><text:list-item><text:p>Ask early.</text:p></text:list-item></text:list>)"
      R"(<table:table><table:table-row><table:table-cell><text:p>Kind</text:p></table:table-cell>)"
      R"(<table:table-cell><text:p>Days</text:p></table:table-cell></table:table-row>)"
      R"(<table:table-row><table:table-cell><text:p>Annual</text:p></table:table-cell>)"
      R"(<table:table-cell><text:p>25</text:p></table:table-cell></table:table-row></table:table>)"
      R"(<text:p>Line one<text:line-break/>line two.</text:p>)"
      R"(<text:tracked-changes><text:changed-region><text:p>deleted words</text:p></text:changed-region></text:tracked-changes>)";
  auto doc = load_document(zip("handbook.odt", {{"content.xml", odt_content(body)}}));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "odt");
  EXPECT_EQ(doc->text,
            "Handbook\n\nWelcome aboard team.\n\nLeave\n\nAsk early.\n\n| Kind | Days |\n| --- | --- |\n| Annual | 25 "
            "|\n\nLine "
            "one\nline two.");
  EXPECT_EQ(segment_of(*doc, "| Annual | 25 |").heading_path, (std::vector<std::string>{"Handbook", "Leave"}));
  EXPECT_EQ(doc->title, "Handbook");
}

TEST_F(ZipLoaderTest, OdtTitleFromMetaAndHostileFilesGetClearErrors) {
  auto doc = load_document(
      zip("meta.odt",
          {{"content.xml", odt_content("<text:p>Body text.</text:p>")},
           {"meta.xml", R"(<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" )"
                        R"(xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta>)"
                        R"(<dc:title>Staff handbook</dc:title></office:meta></office:document-meta>)"}}));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->title, "Staff handbook");

  auto no_content = load_document(zip("empty.odt", {{"meta.xml", "<x/>"}}));
  ASSERT_FALSE(no_content);
  EXPECT_NE(no_content.error().message.find("content.xml"), std::string::npos) << no_content.error().message;

  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<text:section>";
  for (int i = 0; i < 300; ++i) deep += "</text:section>";
  auto nested = load_document(zip("deep.odt", {{"content.xml", odt_content(deep)}}));
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("max_depth"), std::string::npos) << nested.error().message;

  auto broken = load_document(zip("broken.odt", {{"content.xml", "<office:document-content><text:p>"}}));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("corrupt ODT"), std::string::npos) << broken.error().message;
}

TEST_F(ZipLoaderTest, EpubReadsChaptersInSpineOrderWithTheirHeadings) {
  // The spine lists ch2.xhtml first; "text/ch 3.xhtml" is found through its %-escaped href.
  auto parts = epub_book({{"ch2.xhtml", "<h1>Departure</h1><p>The ship left at dawn.</p>"},
                          {"ch1.xhtml", "<h1>Arrival</h1><h2>The harbour</h2><p>Gulls everywhere.</p>"},
                          {"text/ch%203.xhtml", "<p>An epilogue without a heading.</p>"}},
                         "The Voyage");
  for (auto& [name, content] : parts) {
    if (name == "OEBPS/text/ch%203.xhtml") name = "OEBPS/text/ch 3.xhtml";
  }
  auto doc = load_document(zip("voyage.epub", parts));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "epub");
  EXPECT_EQ(doc->title, "The Voyage");
  EXPECT_EQ(doc->text,
            "Departure\n\nThe ship left at dawn.\n\nArrival\n\nThe harbour\n\nGulls everywhere.\n\n"
            "An epilogue without a heading.");
  EXPECT_EQ(segment_of(*doc, "Gulls").heading_path, (std::vector<std::string>{"Arrival", "The harbour"}));
  EXPECT_TRUE(segment_of(*doc, "An epilogue").heading_path.empty());
}

TEST_F(ZipLoaderTest, EpubHostileFilesGetClearErrors) {
  auto no_container = load_document(zip("bare.epub", {{"mimetype", "application/epub+zip"}}));
  ASSERT_FALSE(no_container);
  EXPECT_NE(no_container.error().message.find("container.xml"), std::string::npos) << no_container.error().message;

  LoadLimits limits;
  limits.max_pages = 2;
  auto many = load_document(
      zip("many.epub", epub_book({{"a.xhtml", "<p>a</p>"}, {"b.xhtml", "<p>b</p>"}, {"c.xhtml", "<p>c</p>"}})), limits);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("max_pages"), std::string::npos) << many.error().message;

  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<div>";
  auto nested = load_document(zip("deep.epub", epub_book({{"a.xhtml", deep}})));
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("max_depth"), std::string::npos) << nested.error().message;

  auto parts = epub_book({{"a.xhtml", "<p>a</p>"}});
  std::erase_if(parts, [](const auto& part) { return part.first == "OEBPS/a.xhtml"; });
  auto missing = load_document(zip("missing.epub", parts));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("OEBPS/a.xhtml"), std::string::npos) << missing.error().message;
}

TEST_F(ZipLoaderTest, EveryExtensionNamesItsFormatAndTheListSaysSo) {
  EXPECT_EQ(document_format("deck.PPTX"), "pptx");
  EXPECT_EQ(document_format("essay.odt"), "odt");
  EXPECT_EQ(document_format("novel.epub"), "epub");
  EXPECT_EQ(document_format("sheet.xlsx"), "xlsx");
  EXPECT_EQ(document_format("sheet.ods"), "ods");
  EXPECT_EQ(document_format("export.CSV"), "csv");
  EXPECT_EQ(document_format("export.tab"), "tsv");
  EXPECT_EQ(document_format("drawing.vsdx"), "");
  EXPECT_NE(supported_extensions().find(".pptx"), std::string::npos);
  EXPECT_NE(supported_extensions().find(".odt"), std::string::npos);
  auto refused = load_document(dir_ / "drawing.vsdx");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find(supported_extensions()), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace kotae::text
