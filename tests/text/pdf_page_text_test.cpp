#include <gtest/gtest.h>

#include <vector>

#include "text/loaders/pdf_page_text.h"

namespace kotae::text {
namespace {

// Words of 12-point lines 14 points apart (a block), the n-th word of a line 40 points further right.
struct Page {
  std::vector<PdfWord> words;
  double y = 100;
  void line(std::vector<std::string> texts) {
    for (std::size_t i = 0; i < texts.size(); ++i) {
      words.push_back({.text = texts[i],
                       .x = 50 + 40.0 * static_cast<double>(i),
                       .y = y,
                       .width = 35,
                       .height = 12,
                       .space_after = i + 1 < texts.size()});
    }
    y += 14;
  }
  void gap() { y += 12; }
};

TEST(PdfPageText, KeepsHyphensAndDashesThatEndALineAndDropsOnlyThoseThatSplitALowerCaseWord) {
  Page page;
  page.line({"about", "15-"});
  page.line({"20%", "of", "a", "hyphen-"});
  page.line({"ated", "word,", "UTF-"});
  page.line({"8", "and", "\u201Cquoted\u201D", "\uFB01les", "\u2014"});
  page.line({"then", "15\u2013"});
  page.line({"20.", "A", "soft", "hy\u00AD"});
  page.line({"phen."});
  EXPECT_EQ(pdf_page_text(page.words),
            "about 15-20% of a hyphenated word, UTF-8 and \u201Cquoted\u201D \uFB01les \u2014\nthen 15\u201320. "
            "A soft hyphen.");
}

TEST(PdfPageText, LinesWrapAndBlocksAreSetApartByABlankLine) {
  Page page;
  page.line({"Websites"});
  page.gap();
  page.line({"SQLite", "works", "great"});
  page.line({"(which", "is", "to", "say)."});
  PdfWord& last = page.words.back();
  last.space_after = false;  // "!" right after the word, no space between
  const PdfWord glued{
      .text = std::string("!"), .x = last.x + 35, .y = last.y, .width = 5, .height = 12, .space_after = false};
  page.words.push_back(glued);
  EXPECT_EQ(pdf_page_text(page.words), "Websites\n\nSQLite works great\n(which is to say).!");
}

}  // namespace
}  // namespace kotae::text
