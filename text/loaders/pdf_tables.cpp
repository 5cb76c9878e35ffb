#include "text/loaders/pdf_tables.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

namespace kotae::text {
namespace {

// A gap between two words of one row wider than this fraction of the font size ends a cell: word
// spaces are about a quarter of it, even justified ones stay under a half, and cells are set apart by
// their padding on both sides (about one font size in browsers, Word and LaTeX alike).
constexpr double kCellGap = 0.7;
// Rows of one table are closer than this many row heights (their padding is all that parts them).
constexpr double kRowGap = 1.5;
// A word belongs to a band of words it overlaps by this share of its height.
constexpr double kRowOverlap = 0.4;
// A cell wraps onto at most this many more lines.
constexpr std::size_t kMaxWrappedLines = 2;
// Columns of running text (a two- or three-column page) are each at least this share of the page
// wide, and their lines hold at least kProseWords words (the median); a table has narrower columns
// or shorter cells.
constexpr double kProseColumn = 0.25;
constexpr std::size_t kProseWords = 4;

struct Cell {
  double left = 0, right = 0;
  std::vector<std::size_t> words;  // left to right
};

struct Band {  // the words sharing a baseline across the page
  double top = 0, bottom = 0, middle = 0, height = 0;
  std::vector<std::size_t> words;
  std::vector<Cell> cells;
};

std::vector<Band> bands_of(std::span<const PdfWord> words) {
  std::vector<std::size_t> order(words.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto middle = [&](std::size_t i) { return words[i].y + words[i].height / 2; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return middle(a) < middle(b); });
  std::vector<Band> bands;
  for (const std::size_t i : order) {
    const PdfWord& word = words[i];
    // A word shares a band when it overlaps it by most of a line: the baseline's words, and those of a
    // cell set in the middle of a row beside a cell that wraps onto two lines.
    const double overlap = std::min(bands.empty() ? 0 : bands.back().bottom, word.y + word.height) -
                           std::max(bands.empty() ? 0 : bands.back().top, word.y);
    if (bands.empty() || overlap < kRowOverlap * std::max(0.5, word.height)) {
      bands.push_back({.top = word.y,
                       .bottom = word.y + word.height,
                       .middle = middle(i),
                       .height = word.height,
                       .words = {},
                       .cells = {}});
    }
    Band& band = bands.back();
    band.words.push_back(i);
    band.top = std::min(band.top, word.y);
    band.bottom = std::max(band.bottom, word.y + word.height);
    band.height = band.bottom - band.top;
  }
  for (Band& band : bands) {
    std::stable_sort(band.words.begin(), band.words.end(),
                     [&](std::size_t a, std::size_t b) { return words[a].x < words[b].x; });
    for (const std::size_t i : band.words) {
      const PdfWord& word = words[i];
      if (band.cells.empty() || word.x - band.cells.back().right >
                                    kCellGap * std::max(word.size(), words[band.cells.back().words.back()].size())) {
        band.cells.push_back({.left = word.x, .right = word.x + word.width, .words = {}});
      }
      Cell& cell = band.cells.back();
      cell.words.push_back(i);
      cell.right = std::max(cell.right, word.x + word.width);
    }
  }
  return bands;
}

// The columns of a run of bands: the spans where some cell lies, merged where cells overlap.
std::vector<std::pair<double, double>> columns_of(std::span<const Band> run) {
  std::vector<std::pair<double, double>> spans;
  for (const Band& band : run) {
    for (const Cell& cell : band.cells) spans.emplace_back(cell.left, cell.right);
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> columns;
  for (const auto& span : spans) {
    if (!columns.empty() && span.first <= columns.back().second) {
      columns.back().second = std::max(columns.back().second, span.second);
    } else {
      columns.push_back(span);
    }
  }
  return columns;
}

std::size_t column_at(const std::vector<std::pair<double, double>>& columns, const Cell& cell) {
  const double centre = (cell.left + cell.right) / 2;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (centre <= columns[c].second) return c;
  }
  return columns.size() - 1;
}

std::string cell_text(std::span<const PdfWord> words, const std::vector<std::size_t>& members) {
  // Its words line by line (a wrapped cell's lines share the band), left to right in each line.
  std::vector<PdfWord> own;
  for (const std::size_t i : members) own.push_back(words[i]);
  std::stable_sort(own.begin(), own.end(),
                   [](const PdfWord& a, const PdfWord& b) { return a.y + a.height / 2 < b.y + b.height / 2; });
  for (std::size_t line = 0; line < own.size();) {
    std::size_t end = line + 1;
    const double middle = own[line].y + own[line].height / 2;
    while (end < own.size() && own[end].y + own[end].height / 2 - middle < own[line].height / 2) ++end;
    std::stable_sort(own.begin() + static_cast<long>(line), own.begin() + static_cast<long>(end),
                     [](const PdfWord& a, const PdfWord& b) { return a.x < b.x; });
    line = end;
  }
  std::string text = join_lines(pdf_lines(own, {}));
  std::replace(text.begin(), text.end(), '\n', ' ');  // a cell is one line of its row
  return text;
}

std::size_t word_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), ' ')) + (text.empty() ? 0 : 1);
}

std::size_t median_words(const std::vector<std::vector<std::string>>& rows, std::size_t column) {
  std::vector<std::size_t> counts;
  for (const auto& row : rows) {
    if (!row[column].empty()) counts.push_back(word_count(row[column]));
  }
  if (counts.empty()) return 0;
  std::nth_element(counts.begin(), counts.begin() + static_cast<long>(counts.size() / 2), counts.end());
  return counts[counts.size() / 2];
}

// Whether the columns are columns of running text rather than a table's: all wide, all wordy.
bool prose_columns(const std::vector<std::pair<double, double>>& columns,
                   const std::vector<std::vector<std::string>>& rows, double page_width) {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const double width = columns[c].second - columns[c].first;
    if (width < kProseColumn * page_width || median_words(rows, c) < kProseWords) return false;
  }
  return true;
}

// A continuation band holds the next lines of cells that wrap: it has nothing in the first column.
bool continues_row(const Band& band, const std::vector<std::pair<double, double>>& columns) {
  return column_at(columns, band.cells.front()) > 0;
}

std::optional<FoundTable> table_of(std::span<const PdfWord> words, std::span<const Band> run, double page_width) {
  const auto columns = columns_of(run);
  if (columns.size() < 2) return std::nullopt;
  // Each row's words per column: a continuation band adds to the row above it.
  std::vector<std::vector<std::vector<std::size_t>>> rows;
  for (const Band& band : run) {
    if (rows.empty() || !continues_row(band, columns)) rows.emplace_back(columns.size());
    for (const Cell& cell : band.cells) {
      auto& into = rows.back()[column_at(columns, cell)];
      into.insert(into.end(), cell.words.begin(), cell.words.end());
    }
  }
  if (rows.size() < kMinTableRows) return std::nullopt;
  FoundTable table;
  std::size_t filled = 0;
  for (const auto& members : rows) {
    auto& row = table.rows.emplace_back();
    for (const auto& cell : members) {
      row.push_back(cell_text(words, cell));
      filled += !cell.empty();
      table.words.insert(table.words.end(), cell.begin(), cell.end());
    }
  }
  if (filled * 2 < rows.size() * columns.size()) return std::nullopt;  // mostly holes: not a grid
  if (prose_columns(columns, table.rows, page_width)) return std::nullopt;
  return table;
}

}  // namespace

std::vector<FoundTable> find_pdf_tables(std::span<const PdfWord> words, double page_width) {
  const std::vector<Band> bands = bands_of(words);
  std::vector<FoundTable> tables;
  std::size_t start = 0;
  const auto close_run = [&](std::size_t end) {
    while (end > start && bands[end - 1].cells.size() < 2) --end;  // a paragraph set in below the table
    if (end - start >= kMinTableRows) {
      if (auto table = table_of(words, std::span(bands).subspan(start, end - start), page_width)) {
        tables.push_back(std::move(*table));
      }
    }
  };
  double run_left = 0;        // the run's leftmost cell: a band starting right of it may continue a row
  std::size_t continued = 0;  // continuation bands in a row: a cell wraps onto a line or two, an indented list goes on
  for (std::size_t i = 0; i < bands.size(); ++i) {
    const Band& band = bands[i];
    const bool grid_row = band.cells.size() >= 2;
    const bool goes_on =
        i > start && band.top - bands[i - 1].bottom <= kRowGap * std::max(band.height, bands[i - 1].height);
    // A band of one cell within a run: a wrapped cell's next line (right of the first column) or a row
    // whose other cells are empty (in the first column).
    const bool continuation = goes_on && !grid_row && continued < kMaxWrappedLines &&
                              (band.cells.front().left > run_left + band.height ||
                               std::abs(band.cells.front().left - run_left) <= band.height);
    continued = continuation ? continued + 1 : 0;
    // A band with more cells than the run's first (its header) starts another structure: the table
    // under two columns of text.
    const bool same_grid = i == start || band.cells.size() <= bands[start].cells.size();
    if ((grid_row && (i == start || (goes_on && same_grid))) || continuation) {
      run_left = i == start ? band.cells.front().left : std::min(run_left, band.cells.front().left);
      continue;
    }
    close_run(i);
    start = grid_row ? i : i + 1;
    if (grid_row) run_left = band.cells.front().left;
  }
  close_run(bands.size());
  return tables;
}

}  // namespace kotae::text
