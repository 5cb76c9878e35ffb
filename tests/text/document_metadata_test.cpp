// Document metadata (text/document_metadata.h): the checks a caller's object passes before an upload or
// a PATCH is accepted, each limit one past its bound; what a PATCH keeps; and what files say of
// themselves (title, author, created, modified), read from DOCX, PPTX and XLSX core properties built for
// real with libzip and from e-mail headers, cleaned and bounded however hostile the file.

#include "text/document_metadata.h"

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
using Properties = std::vector<std::pair<std::string, std::string>>;

// The problem parse_metadata names, "" when the text passes.
std::string problem(std::string_view text) {
  auto parsed = parse_metadata(text, "metadata");
  return parsed ? "" : parsed.error().message;
}

TEST(DocumentMetadata, ACallersObjectPassesWithEveryKindOfValue) {
  auto parsed = parse_metadata(
      R"({"dept": "hr", "year": 2024, "ratio": 0.5, "draft": false, "tags": ["policy", "leave"],)"
      R"( "published": "2024-05-01", "reviewed_at": "2024-05-01T10:30:00Z", "a.b-c_d": "x", "source": "upload"})",
      "metadata");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["tags"].size(), 2u);
  EXPECT_EQ(problem("{}"), "");
}

TEST(DocumentMetadata, EachLimitOnePastItsBoundIsRefusedNamingTheProblem) {
  auto keys = [](std::size_t n) {
    std::string text = "{";
    for (std::size_t i = 0; i < n; ++i) text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 1";
    return text + "}";
  };
  EXPECT_EQ(problem(keys(64)), "");
  EXPECT_NE(problem(keys(65)).find("65 keys, over 64"), std::string::npos) << problem(keys(65));

  const std::string key64 = "k" + std::string(63, 'x'), key65 = "k" + std::string(64, 'x');
  EXPECT_EQ(problem("{\"" + key64 + "\": 1}"), "");
  EXPECT_NE(problem("{\"" + key65 + "\": 1}").find("is not a name"), std::string::npos);
  for (const char* bad : {"9lives", "has space", "", "dé", "a/b"}) {
    EXPECT_NE(problem(std::string("{\"") + bad + "\": 1}").find("is not a name"), std::string::npos) << bad;
  }

  EXPECT_EQ(problem("{\"s\": \"" + std::string(1024, 'a') + "\"}"), "");
  EXPECT_NE(problem("{\"s\": \"" + std::string(1025, 'a') + "\"}").find("'s' is 1025 bytes, over 1024"),
            std::string::npos);
  EXPECT_NE(problem(R"({"s": "a\u0001b"})").find("control character"), std::string::npos);
  EXPECT_EQ(problem(R"({"s": "line one\nline two\ttab"})"), "");

  std::string list = "[";
  for (int i = 0; i < 65; ++i) list += (i ? ", \"x\"" : "\"x\"");
  EXPECT_NE(problem("{\"l\": " + list + "]}").find("65 items, over 64"), std::string::npos);
  EXPECT_NE(problem(R"({"l": ["a", 1]})").find("other than strings"), std::string::npos);
  EXPECT_NE(problem(R"({"l": ["a", ["b"]]})").find("nests deeper"), std::string::npos);

  EXPECT_NE(problem(R"({"n": null})").find("'n' is null"), std::string::npos);
  EXPECT_NE(problem(R"({"o": {"x": 1}})").find("no nested objects"), std::string::npos);
  EXPECT_NE(problem(R"({"o": [[["deep"]]]})").find("nests deeper"), std::string::npos);
  EXPECT_FALSE(parse_metadata(R"({"n": 1e999})", "m").ok());  // not a finite number
  EXPECT_NE(problem("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(problem("{\"a\": ").find("not valid JSON"), std::string::npos);

  // 16 KiB as compact JSON: 17 strings of 1000 bytes pass every other bound and this one not.
  std::string big = "{";
  for (int i = 0; i < 17; ++i)
    big += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": \"" + std::string(1000, 'a') + "\"";
  big += "}";
  EXPECT_NE(problem(big).find("over 16384"), std::string::npos) << problem(big);
  // Text too large to be worth parsing is refused unread.
  EXPECT_NE(problem("{\"a\": 1" + std::string(kMaxMetadataTextBytes, ' ') + "}").find("bytes, over"),
            std::string::npos);
}

TEST(DocumentMetadata, OnlyTheServerSetsSource) {
  EXPECT_NE(problem(R"({"source": "crawler"})").find("'source' is set by the server ('upload')"), std::string::npos);
  EXPECT_NE(problem(R"({"source": 1})").find("'source'"), std::string::npos);
  const auto given = nlohmann::json::parse(R"({"source": "upload"})");
  EXPECT_TRUE(check_metadata(given, "metadata", "upload").ok());
  EXPECT_FALSE(check_metadata(given, "metadata", "").ok());  // a document the CLI indexed has none
  EXPECT_FALSE(check_metadata(given, "metadata", "mail").ok());
}

TEST(DocumentMetadata, APatchReplacesTheCallersKeysAndKeepsTheServersAndTheFiles) {
  const auto stored = nlohmann::json::parse(
      R"({"source": "upload", "title": "From the file", "author": "Ann", "dept": "hr", "tags": ["a"]})");
  const auto patched = replace_caller_metadata(stored, nlohmann::json::parse(R"({"dept": "legal", "author": "Bob"})"));
  EXPECT_EQ(patched, nlohmann::json::parse(R"({"source": "upload", "title": "From the file", "author": "Bob",
                                               "dept": "legal"})"));
  EXPECT_EQ(replace_caller_metadata(stored, nlohmann::json::object()),
            nlohmann::json::parse(R"({"source": "upload", "title": "From the file", "author": "Ann"})"));
}

TEST(DocumentMetadata, DatesInIso8601) {
  EXPECT_EQ(normalise_iso_date("2024-05-01"), "2024-05-01");
  EXPECT_EQ(normalise_iso_date("2024-05-01T10:30:00Z"), "2024-05-01T10:30:00Z");
  EXPECT_EQ(normalise_iso_date("2024-05-01T10:30Z"), "2024-05-01T10:30:00Z");
  EXPECT_EQ(normalise_iso_date("2024-05-01T10:30:00.25+0200"), "2024-05-01T10:30:00.25+02:00");
  EXPECT_EQ(normalise_iso_date("2024-05-01T10:30:00"), "2024-05-01T10:30:00");
  for (const char* bad :
       {"", "yesterday", "2024-13-01", "2024-05-01T25:00:00Z", "2024-05-01T10:30:00+2", "2024/05/01"}) {
    EXPECT_EQ(normalise_iso_date(bad), "") << bad;
  }
  EXPECT_EQ(iso_date_from_pdf("D:20240501103000+02'00'"), "2024-05-01T10:30:00+02:00");
  EXPECT_EQ(iso_date_from_pdf("D:20240501103000Z"), "2024-05-01T10:30:00Z");
  EXPECT_EQ(iso_date_from_pdf("D:20240501103000-05'30"), "2024-05-01T10:30:00-05:30");
  EXPECT_EQ(iso_date_from_pdf("D:20240501"), "2024-05-01");
  EXPECT_EQ(iso_date_from_pdf("D:2024"), "2024-01-01");
  EXPECT_EQ(iso_date_from_pdf("20240501120000"), "2024-05-01T12:00:00");
  for (const char* bad : {"", "D:", "D:20241301", "D:2024050125", "Tuesday"})
    EXPECT_EQ(iso_date_from_pdf(bad), "") << bad;
}

TEST(DocumentMetadata, FilePropertiesAreOneCleanBoundedLine) {
  EXPECT_EQ(clean_property("  Annual\r\n\treport \x01\x7f"
                           "2024 "),
            "Annual report 2024");
  EXPECT_EQ(clean_property(std::string(3000, 'x')).size(), kMaxMetadataStringBytes);
  const std::string cut = clean_property(std::string(1023, 'x') + "\xC3\xA9");  // é would end past 1024
  EXPECT_EQ(cut, std::string(1023, 'x'));
  EXPECT_EQ(clean_property("bad \xFF byte"), "bad \xEF\xBF\xBD byte");
}

class FilePropertiesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("kotae-file-properties"); }
  fs::path zip(const std::string& name, const testing::ZipParts& parts) {
    const fs::path path = dir_ / name;
    testing::write_zip(path, parts);
    return path;
  }
  static std::string core(const std::string& properties) {
    return R"(<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties")"
           R"( xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/")"
           R"( xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)" +
           properties + "</cp:coreProperties>";
  }
  fs::path dir_;
};

const std::string kCore =
    "<dc:title>Harbour rules</dc:title><dc:creator>Ann Keeper</dc:creator>"
    "<cp:lastModifiedBy>Bob</cp:lastModifiedBy>"
    R"(<dcterms:created xsi:type="dcterms:W3CDTF">2024-05-01T10:30:00Z</dcterms:created>)"
    R"(<dcterms:modified xsi:type="dcterms:W3CDTF">2024-06-02T08:00:00Z</dcterms:modified>)";
const Properties kExpected = {{"title", "Harbour rules"},
                              {"author", "Ann Keeper"},
                              {"created", "2024-05-01T10:30:00Z"},
                              {"modified", "2024-06-02T08:00:00Z"}};

TEST_F(FilePropertiesTest, DocxPptxAndXlsxCorePropertiesAreTheDocumentsMetadata) {
  const std::string body =
      R"(<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>)"
      R"(<w:p><w:r><w:t>Ships berth at dawn.</w:t></w:r></w:p></w:body></w:document>)";
  auto docx = load_document(zip("rules.docx", {{"word/document.xml", body}, {"docProps/core.xml", core(kCore)}}));
  ASSERT_TRUE(docx) << docx.error().message;
  EXPECT_EQ(docx->metadata, kExpected);

  auto pptx_parts = testing::pptx_presentation({{1, testing::pptx_slide(testing::pptx_shape({"Dawn"}, 0))}});
  pptx_parts.emplace_back("docProps/core.xml", core(kCore));
  auto pptx = load_document(zip("rules.pptx", pptx_parts));
  ASSERT_TRUE(pptx) << pptx.error().message;
  EXPECT_EQ(pptx->metadata, kExpected);

  auto xlsx_parts = testing::xlsx_workbook({{"S", R"(<row r="1"><c r="A1" t="s"><v>0</v></c></row>)"}}, {"Berth"});
  xlsx_parts.emplace_back("docProps/core.xml", core(kCore));
  auto xlsx = load_document(zip("rules.xlsx", xlsx_parts));
  ASSERT_TRUE(xlsx) << xlsx.error().message;
  EXPECT_EQ(xlsx->metadata, kExpected);

  // Without a core part, or with nothing in it, a file says nothing of itself.
  auto bare = load_document(zip("bare.docx", {{"word/document.xml", body}}));
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_TRUE(bare->metadata.empty());
}

TEST_F(FilePropertiesTest, HostilePropertiesAreCleanedBoundedOrLeftOut) {
  const std::string body =
      R"(<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>)"
      R"(<w:p><w:r><w:t>Text.</w:t></w:r></w:p></w:body></w:document>)";
  const std::string hostile = "<dc:title>  Line one\n\tline &#x9F;two  </dc:title><dc:creator>" +
                              std::string(100000, 'a') +
                              "</dc:creator><dcterms:created>next Tuesday</dcterms:created>"
                              "<dcterms:modified>2024-02-30T99:00:00Z</dcterms:modified>";
  auto doc = load_document(zip("hostile.docx", {{"word/document.xml", body}, {"docProps/core.xml", core(hostile)}}));
  ASSERT_TRUE(doc) << doc.error().message;
  ASSERT_EQ(doc->metadata.size(), 2u);
  EXPECT_EQ(doc->metadata[0], (std::pair<std::string, std::string>{"title", "Line one line two"}));
  EXPECT_EQ(doc->metadata[1].first, "author");
  EXPECT_EQ(doc->metadata[1].second.size(), kMaxMetadataStringBytes);  // no date that is not one

  const std::string eml = "From: Ann <ann@lighthouse.example>\r\nSubject: Lamp\x01 " + std::string(3000, 's') +
                          "\r\nDate: not a date\r\n\r\nThe lamp.\r\n";
  auto mail = load_document_bytes(eml, "eml", {});
  ASSERT_TRUE(mail) << mail.error().message;
  for (const auto& [key, value] : mail->metadata) {
    EXPECT_LE(value.size(), kMaxMetadataStringBytes) << key;
    EXPECT_EQ(value.find('\x01'), std::string::npos) << key;
    EXPECT_NE(key, "created");  // the Date header is no date
  }
}

}  // namespace
}  // namespace kotae::text
