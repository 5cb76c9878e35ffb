#pragma once
// Tables on a PDF page, found from where its words are (poppler-cpp gives no ruling lines, so aligned
// columns are the evidence; a ruled table has them too). Words are grouped into rows by their
// baseline and into cells by gaps wider than a word space; a run of at least kMinTableRows rows of two
// or more cells is a table when its cells' spans fall into the same columns and the columns hold short
// cells rather than lines of prose (two columns of running text are aligned too, but read as text). A
// row whose cells wrap goes on in bands with nothing in the first column.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "text/loaders/pdf_lines.h"

namespace kotae::text {

constexpr std::size_t kMinTableRows = 3;  // the header and two rows

struct FoundTable {
  std::vector<std::vector<std::string>> rows;  // the header first
  std::vector<std::size_t> words;              // the indices of the words it took
};

std::vector<FoundTable> find_pdf_tables(std::span<const PdfWord> words, double page_width);

}  // namespace kotae::text
