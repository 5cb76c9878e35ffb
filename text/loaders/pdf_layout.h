#pragma once
// How a PDF's born-digital pages read, from the words poppler finds on them (each with its box and
// font): tables found from the words' positions (text/loaders/pdf_tables.h), the other words joined
// into lines (text/loaders/pdf_lines.h), lines and tables put in reading order, columns one after the
// other (text/loaders/pdf_reading_order.h), lines joined into blocks with hyphenated words joined
// again, headings told by their font's size and weight, and running headers, footers and page
// numbers (a line repeated at the same place on most pages) set apart.
//
// Two steps, so that a long PDF's words are not all held at once: read_pdf_page on each page as it is
// read, then lay_out_pdf over the pages' lines (headings and running lines need the whole document).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "text/loaders/pdf_lines.h"

namespace kotae::text {

struct PdfTable {
  std::vector<std::vector<std::string>> rows;  // the header first; cells in column order
  std::size_t before_line = 0;                 // where it reads: before PdfPageContent::lines[before_line]
};

// A page's lines in reading order, its tables' words left out, and its tables.
struct PdfPageContent {
  double width = 0, height = 0;  // points
  std::vector<PdfLine> lines;
  std::vector<PdfTable> tables;
};

PdfPageContent read_pdf_page(std::span<const PdfWord> words, double width, double height);

struct PdfBlock {
  enum class Kind { paragraph, heading, table };
  Kind kind = Kind::paragraph;
  std::string text;                            // paragraph, heading
  int level = 0;                               // heading: 1 for the largest type
  std::vector<std::vector<std::string>> rows;  // table
};

struct PdfPageLayout {
  std::vector<PdfBlock> blocks;        // in reading order, running lines left out
  std::vector<std::string> furniture;  // its running headers, footers and page numbers, top to bottom
};

std::vector<PdfPageLayout> lay_out_pdf(std::span<const PdfPageContent> pages);

}  // namespace kotae::text
