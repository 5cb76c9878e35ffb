#pragma once
// A PDF page's text from its words (as poppler finds them, in reading order, each with its box):
// lines where the words wrap, a blank line where a block ends, and hyphens kept as the PDF shows
// them. poppler's own text dump drops every hyphen that ends a line, which turns "15-" + "20%"
// into "1520%"; here a hyphen goes only when it splits a lower-case word ("hyphen-" + "ated").

#include <span>
#include <string>

namespace kotae::text {

struct PdfWord {
  std::string text;                            // UTF-8, as the PDF's fonts map it (ligatures kept)
  double x = 0, y = 0, width = 0, height = 0;  // box in points, y growing down the page
  bool space_after = false;                    // a space follows on the same line
};

std::string pdf_page_text(std::span<const PdfWord> words);

}  // namespace kotae::text
