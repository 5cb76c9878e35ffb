#pragma once
// A PDF page's words (as poppler finds them, in reading order, each with its box and font) joined into
// lines, and lines into the text of a block. Hyphens are kept as the PDF shows them: poppler's own text
// dump drops every hyphen that ends a line, which turns "15-" + "20%" into "1520%"; here a hyphen goes
// only when it splits a lower-case word ("hyphen-" + "ated").

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace kotae::text {

struct PdfWord {
  std::string text;                            // UTF-8, as the PDF's fonts map it (ligatures kept)
  double x = 0, y = 0, width = 0, height = 0;  // box in points, y growing down the page
  double font_size = 0;                        // points; 0 when poppler gives none (the box's height stands in)
  bool bold = false;                           // the font's name says bold (or black, heavy, semibold)
  bool space_after = false;                    // a space follows on the same line
  double size() const { return font_size > 0 ? font_size : height; }
};

struct PdfLine {
  std::string text;  // its words, a space between them where the PDF has one or a gap shows one
  double left = 0, top = 0, right = 0, bottom = 0;
  double font_size = 0;  // the size most of its characters have
  bool bold = false;     // most of its characters are bold
  std::size_t words = 0;
  bool spread = false;  // some of its words are set apart by more than a word space (cells, tab stops)
  double height() const { return bottom - top; }
};

// Whether poppler's next word `b` goes on with the line of `a` (the same baseline, further right).
bool same_line(const PdfWord& a, const PdfWord& b);

// The words' lines in the words' order; words[i] with skip[i] set are left out (skip may be empty).
// Words on one baseline three font sizes apart or more are on two lines (two columns' lines).
std::vector<PdfLine> pdf_lines(std::span<const PdfWord> words, const std::vector<bool>& skip);

// The text of a block of lines: a line break between lines, except after a hyphen or a dash that
// splits a word, which is joined again (the hyphen dropped only in a lower-case word split in two).
std::string join_lines(std::span<const PdfLine> lines);

}  // namespace kotae::text
