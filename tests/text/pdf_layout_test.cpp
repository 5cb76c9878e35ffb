#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/loaders/pdf_layout.h"
#include "text/loaders/pdf_lines.h"

namespace kotae::text {
namespace {

constexpr double kPageWidth = 612, kPageHeight = 792;

// Words set on a US Letter page: lines of 12-point words 14 points apart (a block), the n-th word of
// a line 40 points right of the line's start.
struct Page {
  std::vector<PdfWord> words;
  double y = 100;
  void line(std::vector<std::string> texts, double x = 50, double size = 12, bool bold = false) {
    for (std::size_t i = 0; i < texts.size(); ++i) {
      words.push_back({.text = texts[i],
                       .x = x + 40.0 * static_cast<double>(i),
                       .y = y,
                       .width = 35,
                       .height = size,
                       .font_size = size,
                       .bold = bold,
                       .space_after = i + 1 < texts.size()});
    }
    y += size + 2;
  }
  // A row of cells: each cell's words 3 points apart, cells at the given x.
  void row(const std::vector<std::string>& cells, const std::vector<double>& xs, bool bold = false) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (cells[c].empty()) continue;
      words.push_back({.text = cells[c], .x = xs[c], .y = y, .width = 40, .height = 12, .font_size = 12, .bold = bold});
    }
    y += 18;
  }
  void gap(double points = 12) { y += points; }
  PdfPageContent read() const { return read_pdf_page(words, kPageWidth, kPageHeight); }
};

std::vector<PdfPageLayout> lay_out(const std::vector<Page>& pages) {
  std::vector<PdfPageContent> contents;
  for (const Page& page : pages) contents.push_back(page.read());
  return lay_out_pdf(contents);
}

// The page's blocks as text: paragraphs as they are, headings as "#" times their level, tables as
// cells joined by " | ", blocks apart by a blank line.
std::string blocks_text(const PdfPageLayout& page) {
  std::string text;
  for (const PdfBlock& block : page.blocks) {
    if (!text.empty()) text += "\n\n";
    if (block.kind == PdfBlock::Kind::heading) text += std::string(static_cast<std::size_t>(block.level), '#') + " ";
    if (block.kind != PdfBlock::Kind::table) {
      text += block.text;
      continue;
    }
    for (std::size_t r = 0; r < block.rows.size(); ++r) {
      if (r > 0) text += '\n';
      for (std::size_t c = 0; c < block.rows[r].size(); ++c) text.append(c > 0 ? " | " : "").append(block.rows[r][c]);
    }
  }
  return text;
}

TEST(PdfLayout, KeepsHyphensAndDashesThatEndALineAndDropsOnlyThoseThatSplitALowerCaseWord) {
  Page page;
  page.line({"about", "15-"});
  page.line({"20%", "of", "a", "hyphen-"});
  page.line({"ated", "word,", "UTF-"});
  page.line({"8", "and", "\u201Cquoted\u201D", "\uFB01les", "\u2014"});
  page.line({"then", "15\u2013"});
  page.line({"20.", "A", "soft", "hy\u00AD"});
  page.line({"phen."});
  EXPECT_EQ(blocks_text(lay_out({page})[0]),
            "about 15-20% of a hyphenated word, UTF-8 and \u201Cquoted\u201D \uFB01les \u2014\nthen 15\u201320. "
            "A soft hyphen.");
}

TEST(PdfLayout, LinesWrapAndBlocksAreSetApartByABlankLine) {
  Page page;
  page.line({"Websites"});
  page.gap();
  page.line({"SQLite", "works", "great"});
  page.line({"(which", "is", "to", "say)."});
  PdfWord& last = page.words.back();
  last.space_after = false;  // "!" right after the word, no space between
  page.words.push_back(
      {.text = std::string("!"), .x = last.x + 35, .y = last.y, .width = 5, .height = 12, .font_size = 12});
  EXPECT_EQ(blocks_text(lay_out({page})[0]), "Websites\n\nSQLite works great\n(which is to say).!");
}

TEST(PdfLayout, WordsApartOnALineAreTwoWordsEvenWithoutASpaceAndAGutterApartTwoLines) {
  Page page;
  page.words.push_back({.text = "6:29", .x = 20, .y = 100, .width = 20, .height = 9, .font_size = 8});
  page.words.push_back({.text = "AM", .x = 45, .y = 100, .width = 10, .height = 9, .font_size = 8});
  page.words.push_back({.text = "Report", .x = 320, .y = 100, .width = 30, .height = 9, .font_size = 8});
  EXPECT_EQ(blocks_text(lay_out({page})[0]), "6:29 AM\n\nReport");
}

TEST(PdfLayout, AlignedShortCellsAreATableInItsPlaceAndTheirRowsKeepTheirCells) {
  Page page;
  page.line({"Carriers", "and", "costs:"});
  page.gap();
  const std::vector<double> xs = {50, 200, 300, 400};
  page.row({"Carrier", "Region", "Cost", "Days"}, xs, true);
  page.row({"Nordic", "North", "1,250.00", "3"}, xs);
  page.row({"Atlas", "", "980.50", "5"}, xs);  // an empty cell
  page.row({"Kappa", "East", "75", "12"}, xs);
  page.gap();
  page.line({"After", "the", "table."});
  EXPECT_EQ(blocks_text(lay_out({page})[0]),
            "Carriers and costs:\n\nCarrier | Region | Cost | Days\nNordic | North | 1,250.00 | 3\n"
            "Atlas |  | 980.50 | 5\nKappa | East | 75 | 12\n\nAfter the table.");
}

TEST(PdfLayout, ACellThatWrapsStaysInItsRow) {
  Page page;
  const std::vector<double> xs = {50, 250};
  page.row({"name", "meaning"}, xs, true);
  page.row({"xx", "language"}, xs);
  page.y -= 4;  // the cell's next line, nothing in the first column
  page.row({"", "code"}, xs);
  page.row({"YY", "country"}, xs);
  page.row({"ZZ", "codeset"}, xs);
  EXPECT_EQ(blocks_text(lay_out({page})[0]), "name | meaning\nxx | language code\nYY | country\nZZ | codeset");
}

TEST(PdfLayout, TwoColumnsOfRunningTextAreReadColumnByColumnNotAsATable) {
  Page page;
  // poppler gives the words column by column; the lines of both columns share their baselines.
  const std::vector<std::vector<std::string>> left = {{"the", "left", "column", "starts", "here", "and"},
                                                      {"it", "goes", "on", "for", "a", "while"},
                                                      {"until", "it", "ends", "at", "the", "bottom."}};
  const std::vector<std::vector<std::string>> right = {{"the", "right", "column", "follows", "it", "and"},
                                                       {"it", "also", "goes", "on", "a", "while"},
                                                       {"until", "this", "page", "is", "done", "now."}};
  for (const auto& line : left) page.line(line, 40);
  page.y = 100;
  for (const auto& line : right) page.line(line, 330);
  EXPECT_EQ(blocks_text(lay_out({page})[0]),
            "the left column starts here and\nit goes on for a while\nuntil it ends at the bottom.\n\n"
            "the right column follows it and\nit also goes on a while\nuntil this page is done now.");
}

TEST(PdfLayout, ColumnsWhoseTopsAreNotLevelAreReadOneAfterTheOtherAndWhatFollowsThemAfterBoth) {
  // As poppler gives a browser's balanced columns: the right column's first line (higher than the left
  // column's) first, then the lines by height across both columns; then a heading and a paragraph
  // under the left column only, after a gap.
  Page page;
  page.y = 90;
  page.line({"right", "one", "starts", "higher", "up"}, 330);
  page.y = 100;
  page.line({"left", "one", "starts", "the", "text"}, 40);
  page.y = 104;
  page.line({"right", "two", "goes", "on", "below"}, 330);
  page.y = 114;
  page.line({"left", "two", "goes", "on", "too"}, 40);
  page.y = 160;
  page.line({"After", "both", "columns", "comes", "this."}, 40);
  EXPECT_EQ(blocks_text(lay_out({page})[0]),
            "left one starts the text\nleft two goes on too\n\nright one starts higher up\nright two goes on below\n\n"
            "After both columns comes this.");
}

TEST(PdfLayout, HeadingsComeFromTheTypeLargerOuterBoldAtBodySizeInnermost) {
  Page page;
  page.line({"Annual", "Review"}, 50, 20, true);
  page.gap();
  page.line({"Shipping"}, 50, 14, true);
  page.gap();
  page.line({"Routes", "north"}, 50, 12, true);
  page.line({"The", "body", "text", "is", "set", "in", "twelve", "points", "here."});
  page.gap();
  page.line({"Note"}, 50, 12, true);  // a run-in label, one word
  page.line({"More", "body", "text", "in", "twelve", "points", "for", "the", "mode."});
  page.gap();
  page.line({"\u2022", "Bold", "item"}, 50, 12, true);  // a list item
  page.gap();
  page.line({"Staff"}, 50, 14, false);
  EXPECT_EQ(blocks_text(lay_out({page})[0]),
            "# Annual Review\n\n## Shipping\n\n### Routes north\n\nThe body text is set in twelve points here.\n\n"
            "Note\n\nMore body text in twelve points for the mode.\n\n\u2022 Bold item\n\n## Staff");
}

// Four pages, each with a running header (the title and the page number) and a footer.
std::vector<Page> pages_with_running_lines(std::size_t count) {
  std::vector<Page> pages(count);
  for (std::size_t p = 0; p < count; ++p) {
    pages[p].y = 20;
    pages[p].line({"Operations", "Handbook", std::to_string(p + 1) + "/" + std::to_string(count)});
    pages[p].y = 100;
    pages[p].line({"Body", "of", "page", std::to_string(p + 1)});
    pages[p].y = 760;
    pages[p].line({"Confidential"});
  }
  return pages;
}

TEST(PdfLayout, RunningHeadersFootersAndPageNumbersAreSetApart) {
  const auto layout = lay_out(pages_with_running_lines(4));
  ASSERT_EQ(layout.size(), 4U);
  for (std::size_t p = 0; p < 4; ++p) {
    EXPECT_EQ(blocks_text(layout[p]), "Body of page " + std::to_string(p + 1));
    EXPECT_EQ(layout[p].furniture,
              (std::vector<std::string>{"Operations Handbook " + std::to_string(p + 1) + "/4", "Confidential"}));
  }
}

TEST(PdfLayout, TwoPagesAreTooFewToTellRunningLinesFromText) {
  const auto layout = lay_out(pages_with_running_lines(2));
  EXPECT_TRUE(layout[0].furniture.empty());
  EXPECT_EQ(blocks_text(layout[0]), "Operations Handbook 1/2\n\nBody of page 1\n\nConfidential");
}

}  // namespace
}  // namespace kotae::text
