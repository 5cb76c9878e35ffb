// Tables: the Markdown tables DocumentBuilder writes, and the formats that are all tables: XLSX and
// ODS (zipped here with libzip from their parts, tests/support/office_files.h), CSV and TSV.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/office_files.h"
#include "support/test_data.h"
#include "support/write_zip.h"
#include "text/loaders/document_builder.h"
#include "text/loaders/loader.h"

namespace kotae::text {
namespace {

namespace fs = std::filesystem;
using testing::ods_content;
using testing::xlsx_workbook;
using testing::ZipParts;

class TableLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("kotae-table-loaders"); }
  fs::path zip(const std::string& name, const ZipParts& parts) {
    const fs::path path = dir_ / name;
    testing::write_zip(path, parts);
    return path;
  }
  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static const TextSegment& segment_of(const Document& doc, const std::string& needle) {
    const auto at = doc.text.find(needle);
    for (const auto& s : doc.segments) {
      if (at >= s.begin && at < s.end) return s;
    }
    ADD_FAILURE() << "no segment holds " << needle;
    return doc.segments.front();
  }

  fs::path dir_;
};

TEST(DocumentBuilderTable, WritesAMarkdownTableOneSegmentPerRow) {
  DocumentBuilder builder(1 << 20);
  builder.add_heading(1, "Prices");
  builder.add_table(
      {"", {{"Fruit", "", "Price"}, {"Apple", "", "3 | 4"}, {" ", "", ""}, {"Pear\nwilliams", "", "2"}}, {}});
  auto doc = std::move(builder).finish("md", "", 0);
  ASSERT_TRUE(doc) << doc.error().message;
  // The empty column and row are left out; "|" is escaped; a cell is one line.
  EXPECT_EQ(doc->text, "Prices\n\n| Fruit | Price |\n| --- | --- |\n| Apple | 3 \\| 4 |\n| Pear williams | 2 |");
  ASSERT_EQ(doc->segments.size(), 4u);
  const TextSegment& header = doc->segments[1];
  EXPECT_EQ(header.table, "Table 1");
  EXPECT_EQ(header.row, 1u);
  EXPECT_EQ(header.table_begin, header.begin);
  EXPECT_EQ(header.header_end, header.end);
  EXPECT_EQ(doc->segments[3].row, 4u);  // the source's numbering, not the kept rows'
  EXPECT_EQ(doc->segments[3].header_end, header.end);
  EXPECT_EQ(doc->segments[3].heading_path, std::vector<std::string>{"Prices"});
}

TEST(DocumentBuilderTable, OneRowOrOneColumnIsNoTable) {
  DocumentBuilder builder(1 << 20);
  builder.add_table({"", {{"Only", "row"}}, {}});
  builder.add_table({"", {{"a list"}, {"in a grid"}}, {}});
  auto doc = std::move(builder).finish("html", "", 0);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->text, "Only | row\n\na list\n\nin a grid");
  for (const auto& s : doc->segments) EXPECT_FALSE(s.in_table());
}

TEST(DocumentBuilderTable, ATableOverTheTextLimitStopsTheDocument) {
  DocumentBuilder builder(40);
  builder.add_table({"", {{"a", "b"}, {"1", "2"}, {"3", "4"}, {"5", "6"}}, {}});
  auto doc = std::move(builder).finish("csv", "", 0);
  ASSERT_FALSE(doc);
  EXPECT_NE(doc.error().message.find("max_text_bytes"), std::string::npos) << doc.error().message;
}

TEST_F(TableLoaderTest, XlsxSheetsAreTablesWithCachedValuesAndDates) {
  const std::string prices =
      R"(<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>)"
      R"(<row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2" s="3"><v>3.2000000000000002</v></c>)"
      R"(<c r="C2" s="1"><v>46363</v></c></row>)"
      R"(<row r="5"><c r="A5" t="inlineStr"><is><t>Pear</t></is></c><c r="B5"><f>B2*2</f><v>6.4</v></c>)"
      R"(<c r="C5" s="2"><v>46363.5</v></c><c r="D5" t="b"><v>1</v></c></row>)"
      R"(<row r="1048576"><c r="A1048576" t="str"><v>Total</v></c><c r="B1048576"><v>9.6</v></c></row>)";
  const std::string notes = R"(<row r="1"><c r="A1" t="s"><v>4</v></c><c r="B1" t="s"><v>1</v></c></row>)"
                            R"(<row r="2"><c r="A2" t="e"><v>#DIV/0!</v></c><c r="B2"><v>7</v></c></row>)";
  auto doc = load_document(zip("book.xlsx", xlsx_workbook({{"Prices", prices}, {"Notes", notes}},
                                                          {"Fruit", "Price", "Picked", "Apple", "Remark"})));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "xlsx");
  EXPECT_EQ(doc->text,
            "Prices\n\n"
            "| Fruit | Price | Picked | |\n| --- | --- | --- | --- |\n"
            "| Apple | 3.2 | 2026-12-07 | |\n"
            "| Pear | 6.4 | 2026-12-07 12:00 | TRUE |\n"
            "| Total | 9.6 | | |\n\n"
            "Notes\n\n| Remark | Price |\n| --- | --- |\n| #DIV/0! | 7 |");
  EXPECT_EQ(doc->title, "Prices");
  const TextSegment& pear = segment_of(*doc, "| Pear");
  EXPECT_EQ(pear.table, "Prices");
  EXPECT_EQ(pear.row, 5u);
  EXPECT_EQ(pear.heading_path, std::vector<std::string>{"Prices"});
  EXPECT_EQ(segment_of(*doc, "| Total").row, 1048576u);
  EXPECT_EQ(segment_of(*doc, "| #DIV").table, "Notes");
}

TEST_F(TableLoaderTest, XlsxInThe1904DateSystem) {
  const std::string rows = R"(<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>)"
                           R"(<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" s="1"><v>0</v></c></row>)";
  auto doc = load_document(zip("old.xlsx", xlsx_workbook({{"S", rows}}, {"What", "When", "Epoch"}, true)));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_NE(doc->text.find("| Epoch | 1904-01-01 |"), std::string::npos) << doc->text;
}

TEST_F(TableLoaderTest, XlsxLimits) {
  LoadLimits limits;
  limits.max_text_bytes = 200;
  std::string rows;
  for (int r = 1; r <= 50; ++r) {
    rows += "<row r=\"" + std::to_string(r) + "\"><c t=\"str\"><v>row number " + std::to_string(r) +
            "</v></c><c><v>1</v></c></row>";
  }
  auto long_sheet = load_document(zip("long.xlsx", xlsx_workbook({{"S", rows}})), limits);
  ASSERT_FALSE(long_sheet);
  EXPECT_NE(long_sheet.error().message.find("max_text_bytes"), std::string::npos) << long_sheet.error().message;

  limits = {};
  limits.max_pages = 2;
  auto many = load_document(zip("many.xlsx", xlsx_workbook({{"A", ""}, {"B", ""}, {"C", ""}})), limits);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("max_pages"), std::string::npos) << many.error().message;

  auto parts = xlsx_workbook({{"A", ""}});
  std::erase_if(parts, [](const auto& part) { return part.first == "xl/worksheets/sheet1.xml"; });
  auto missing = load_document(zip("missing.xlsx", parts));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::corrupt);
}

TEST_F(TableLoaderTest, OdsSheetsCountRepeatedRowsAndColumnsWithoutExpandingEmptyOnes) {
  const std::string sheet =
      R"(<table:table table:name="Stock"><table:table-column table:number-columns-repeated="1024"/>)"
      R"(<table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell>)"
      R"(<table:table-cell><text:p>Count</text:p></table:table-cell>)"
      R"(<table:table-cell><text:p>Since</text:p></table:table-cell></table:table-row>)"
      R"(<table:table-row table:number-rows-repeated="2"><table:table-cell><text:p>Bolt</text:p></table:table-cell>)"
      R"(<table:table-cell office:value-type="float" office:value="4"><text:p>4.00</text:p></table:table-cell>)"
      R"(<table:table-cell office:value-type="date" office:date-value="2026-12-07"><text:p>07/12/26</text:p>)"
      R"(</table:table-cell></table:table-row>)"
      R"(<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/>)"
      R"(</table:table-row>)"
      R"(<table:table-row><table:table-cell table:number-columns-repeated="2"><text:p>x</text:p></table:table-cell>)"
      R"(<table:table-cell table:number-columns-repeated="16000"/></table:table-row></table:table>)";
  auto doc = load_document(zip("stock.ods", {{"content.xml", ods_content(sheet)}}));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "ods");
  EXPECT_EQ(doc->text,
            "Stock\n\n| Item | Count | Since |\n| --- | --- | --- |\n| Bolt | 4.00 | 2026-12-07 |\n"
            "| Bolt | 4.00 | 2026-12-07 |\n| x | x | |");
  EXPECT_EQ(segment_of(*doc, "| x |").row, 1048574u);
  EXPECT_EQ(segment_of(*doc, "| x |").table, "Stock");

  LoadLimits limits;
  limits.max_text_bytes = 1000;
  const std::string filled =
      R"(<table:table table:name="S"><table:table-row table:number-rows-repeated="1000000">)"
      R"(<table:table-cell table:number-columns-repeated="2"><text:p>full</text:p></table:table-cell>)"
      R"(</table:table-row></table:table>)";
  auto refused = load_document(zip("filled.ods", {{"content.xml", ods_content(filled)}}), limits);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("max_text_bytes"), std::string::npos) << refused.error().message;
}

TEST_F(TableLoaderTest, CsvDialectAndHeaderAreSniffed) {
  auto semicolons = load_document(write("de.csv",
                                        "Stadt;Einwohner;Land\r\n\"Köln\";1084831;NRW\r\n"
                                        "\"Frank;furt\";773068;\"He\"\"ssen\"\r\n\"Two\nlines\";1;x\r\n"));
  ASSERT_TRUE(semicolons) << semicolons.error().message;
  EXPECT_EQ(semicolons->format, "csv");
  EXPECT_EQ(semicolons->text,
            "| Stadt | Einwohner | Land |\n| --- | --- | --- |\n| Köln | 1084831 | NRW |\n"
            "| Frank;furt | 773068 | He\"ssen |\n| Two lines | 1 | x |");
  EXPECT_EQ(segment_of(*semicolons, "| Frank").row, 3u);
  EXPECT_EQ(segment_of(*semicolons, "| Two").row, 4u);  // records, not lines

  // Numbers in the first record: no header, so the columns are named.
  auto numbers = load_document(write("n.csv", "1,2.5,3\n4,5,6\n"));
  ASSERT_TRUE(numbers) << numbers.error().message;
  EXPECT_EQ(numbers->text, "| Column 1 | Column 2 | Column 3 |\n| --- | --- | --- |\n| 1 | 2.5 | 3 |\n| 4 | 5 | 6 |");
  EXPECT_EQ(segment_of(*numbers, "| 1 |").row, 1u);

  auto tabs = load_document(write("t.tsv", "name\tnote\nann\tsays, hi; there\n"));
  ASSERT_TRUE(tabs) << tabs.error().message;
  EXPECT_EQ(tabs->format, "tsv");
  EXPECT_EQ(tabs->text, "| name | note |\n| --- | --- |\n| ann | says, hi; there |");

  auto latin1 = load_document(write("l.csv", "name,city\nRen\xE9,Paris\n"));
  ASSERT_TRUE(latin1) << latin1.error().message;
  EXPECT_NE(latin1->text.find("René"), std::string::npos);
}

TEST_F(TableLoaderTest, CsvLimits) {
  LoadLimits limits;
  limits.max_text_bytes = 100;
  std::string many = "a,b\n";
  for (int i = 0; i < 100; ++i) many += "row,value\n";
  auto long_file = load_document(write("long.csv", many), limits);
  ASSERT_FALSE(long_file);
  EXPECT_NE(long_file.error().message.find("max_text_bytes"), std::string::npos) << long_file.error().message;

  auto wide = load_document(write("wide.csv", std::string(20000, ',') + "\n"));
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.error().message.find("more than 16384 fields"), std::string::npos) << wide.error().message;

  for (const char* blank : {"\n\n,,\n", "\t\t\n\t\t\n", ", ,\n,,\n,,\n"}) {
    auto empty = load_document(write("empty.csv", blank));
    ASSERT_FALSE(empty) << empty->text;
    EXPECT_NE(empty.error().message.find("no text"), std::string::npos) << empty.error().message;
  }
}

}  // namespace
}  // namespace kotae::text
