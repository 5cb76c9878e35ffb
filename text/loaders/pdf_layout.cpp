#include "text/loaders/pdf_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "text/loaders/pdf_reading_order.h"
#include "text/loaders/pdf_tables.h"

namespace kotae::text {
namespace {

// Columns are parted by white at least a line high (and never under this many points).
constexpr double kMinGutter = 6;
// Blocks are set apart by more than this fraction of a line's height; the lines of one block are
// (nearly) touching.
constexpr double kBlockGap = 0.4;
// Running lines sit in the top or bottom eighth of the page...
constexpr double kMargin = 0.12;
// ...at the same height (within this fraction of the page) on at least kRunningShare of the pages
// with text, and on three of them at least: alternate left and right headers each reach 40 %.
constexpr double kSameHeight = 0.02;
constexpr double kRunningShare = 0.4;
constexpr std::size_t kRunningMinPages = 3;
// A heading is set this much larger than the body text, or bold at its size; it is short.
constexpr double kHeadingScale = 1.15;
constexpr std::size_t kMaxHeadingLines = 3, kMaxHeadingWords = 20, kMaxBoldHeadingWords = 12;
constexpr int kDeepestHeading = 6;

// What a running line says whatever its page: digits (page numbers, dates) as '#', a lone Roman page
// number as '#', lower case.
std::string running_key(std::string_view text) {
  std::string key;
  for (const char c : text) {
    const bool digit = c >= '0' && c <= '9';
    if (digit && key.ends_with('#')) continue;
    key += digit ? '#' : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (!key.empty() && key.find_first_not_of("ivxlc") == std::string::npos) return "#";
  return key;
}

// furniture[p][l]: whether line l of page p is a running header, footer or page number.
std::vector<std::vector<bool>> find_running_lines(std::span<const PdfPageContent> pages) {
  std::vector<std::vector<bool>> furniture(pages.size());
  struct Place {
    std::size_t page, line;
    double height;  // the line's middle, as a fraction of the page's height
  };
  std::map<std::string, std::vector<Place>> candidates;  // (top or bottom) + key
  std::size_t text_pages = 0;
  for (std::size_t p = 0; p < pages.size(); ++p) {
    furniture[p].assign(pages[p].lines.size(), false);
    if (pages[p].lines.empty() || pages[p].height <= 0) continue;
    ++text_pages;
    for (std::size_t l = 0; l < pages[p].lines.size(); ++l) {
      const PdfLine& line = pages[p].lines[l];
      const double top = line.top / pages[p].height, bottom = line.bottom / pages[p].height;
      if (top >= kMargin && bottom <= 1 - kMargin) continue;
      candidates[std::string(top < kMargin ? "t" : "b").append(running_key(line.text))].push_back(
          {p, l, (top + bottom) / 2});
    }
  }
  const auto needed = std::max<std::size_t>(
      kRunningMinPages, static_cast<std::size_t>(std::ceil(kRunningShare * static_cast<double>(text_pages))));
  if (text_pages < kRunningMinPages) return furniture;
  for (auto& [key, places] : candidates) {
    if (places.size() < needed) continue;
    std::vector<double> heights;
    for (const Place& place : places) heights.push_back(place.height);
    std::nth_element(heights.begin(), heights.begin() + static_cast<long>(heights.size() / 2), heights.end());
    const double median = heights[heights.size() / 2];
    std::set<std::size_t> on_pages;
    for (const Place& place : places) {
      if (std::abs(place.height - median) <= kSameHeight) on_pages.insert(place.page);
    }
    if (on_pages.size() < needed) continue;
    for (const Place& place : places) {
      if (std::abs(place.height - median) <= kSameHeight) furniture[place.page][place.line] = true;
    }
  }
  return furniture;
}

double rounded_size(double size) {
  return std::round(size * 2) / 2;  // half points: the same type measured a little differently is one size
}

// The size most of the text (running lines left out) is set in.
double body_size(std::span<const PdfPageContent> pages, const std::vector<std::vector<bool>>& furniture) {
  std::map<double, std::size_t> characters;
  for (std::size_t p = 0; p < pages.size(); ++p) {
    for (std::size_t l = 0; l < pages[p].lines.size(); ++l) {
      if (!furniture[p][l]) characters[rounded_size(pages[p].lines[l].font_size)] += pages[p].lines[l].text.size();
    }
  }
  if (characters.empty()) return 0;
  return std::max_element(characters.begin(), characters.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

bool new_block(const PdfLine& a, const PdfLine& b) {
  const double gap = b.top - a.bottom;
  if (gap > kBlockGap * std::max(a.height(), b.height()) || b.bottom <= a.top) return true;  // apart, or a column
  if (b.left >= a.right) return true;  // beside it: another column
  const double sizes = std::max(a.font_size, b.font_size);
  return std::abs(a.font_size - b.font_size) > 0.08 * sizes || a.bold != b.bold;  // another kind of type
}

struct LineBlock {
  std::vector<PdfLine> lines;
  std::size_t table = SIZE_MAX;  // or a table of the page
};

// Whether a block of lines reads as a heading, given the body's size: larger type, or bold at the
// body's size in two words or more without a full stop or wide gaps; short either way, with a letter
// in it, no bullet before it.
std::optional<double> heading_size(const std::vector<PdfLine>& lines, double body) {
  if (lines.empty() || lines.size() > kMaxHeadingLines || body <= 0) return std::nullopt;
  std::size_t words = 0;
  bool bold = true, letter = false, spread = false;
  for (const PdfLine& line : lines) {
    spread = spread || line.spread;
    words += line.words;
    bold = bold && line.bold;
    letter = letter || std::any_of(line.text.begin(), line.text.end(), [](char c) {
               return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || static_cast<unsigned char>(c) >= 0x80;
             });
  }
  const double size = rounded_size(lines.front().font_size);
  const std::string_view first = lines.front().text;
  const bool bullet = first.starts_with("\u2022") || first.starts_with("\u25E6") || first.starts_with("- ");
  if (!letter || bullet || words > kMaxHeadingWords) return std::nullopt;
  if (size >= kHeadingScale * body) return size;
  // Bold at the body's size: a run-in label ("Note", "Tip") is one word, a list item has a bullet.
  // Spread out, it is a row of cells (a table's header the table finder missed).
  if (bold && !spread && size >= 0.95 * body && words >= 2 && words <= kMaxBoldHeadingWords &&
      !lines.back().text.ends_with('.'))
    return body;
  return std::nullopt;
}

}  // namespace

PdfPageContent read_pdf_page(std::span<const PdfWord> words, double width, double height) {
  std::vector<FoundTable> found = find_pdf_tables(words, width);
  std::vector<bool> skip(words.size(), false);
  for (const FoundTable& table : found) {
    for (const std::size_t i : table.words) skip[i] = true;
  }
  std::vector<PdfLine> lines = pdf_lines(words, skip);
  // Lines and tables as boxes, tables after the lines, read in the order people read them.
  std::vector<PageBox> boxes;
  std::vector<double> heights;
  for (const PdfLine& line : lines) {
    boxes.push_back({line.left, line.top, line.right, line.bottom});
    heights.push_back(line.height());
  }
  for (const FoundTable& table : found) {
    PageBox box{width, height, 0, 0};
    for (const std::size_t i : table.words) {
      box = {std::min(box.left, words[i].x), std::min(box.top, words[i].y),
             std::max(box.right, words[i].x + words[i].width), std::max(box.bottom, words[i].y + words[i].height)};
    }
    boxes.push_back(box);
  }
  double gutter = kMinGutter;
  if (!heights.empty()) {
    std::nth_element(heights.begin(), heights.begin() + static_cast<long>(heights.size() / 2), heights.end());
    gutter = std::max(gutter, heights[heights.size() / 2]);
  }
  PdfPageContent page{.width = width, .height = height, .lines = {}, .tables = {}};
  for (const std::size_t i : reading_order(boxes, gutter)) {
    if (i < lines.size()) {
      page.lines.push_back(std::move(lines[i]));
    } else {
      page.tables.push_back({std::move(found[i - lines.size()].rows), page.lines.size()});
    }
  }
  return page;
}

std::vector<PdfPageLayout> lay_out_pdf(std::span<const PdfPageContent> pages) {
  auto furniture = find_running_lines(pages);
  bool body_text = false;
  for (std::size_t p = 0; p < pages.size(); ++p) {
    body_text =
        body_text || std::count(furniture[p].begin(), furniture[p].end(), false) > 0 || !pages[p].tables.empty();
  }
  if (!body_text) {  // nothing but running lines: then they are the text
    for (auto& page : furniture) page.assign(page.size(), false);
  }
  const double body = body_size(pages, furniture);

  // Each page's blocks of lines, tables in their places.
  std::vector<std::vector<LineBlock>> blocks(pages.size());
  for (std::size_t p = 0; p < pages.size(); ++p) {
    const PdfPageContent& page = pages[p];
    std::size_t next_table = 0;
    const PdfLine* previous = nullptr;
    for (std::size_t l = 0; l <= page.lines.size(); ++l) {
      for (; next_table < page.tables.size() && page.tables[next_table].before_line == l; ++next_table) {
        blocks[p].push_back({.lines = {}, .table = next_table});
        previous = nullptr;
      }
      if (l == page.lines.size() || furniture[p][l]) continue;
      const PdfLine& line = page.lines[l];
      if (previous == nullptr || new_block(*previous, line)) blocks[p].emplace_back();
      blocks[p].back().lines.push_back(line);
      previous = &line;
    }
  }

  // Heading levels: the larger the type, the outer the heading; bold at the body's size innermost.
  std::set<double, std::greater<>> sizes;
  for (const auto& page : blocks) {
    for (const LineBlock& block : page) {
      if (auto size = heading_size(block.lines, body); size && *size > body) sizes.insert(*size);
    }
  }
  const auto level_of = [&](double size) {
    const auto rank = size > body ? std::distance(sizes.begin(), sizes.find(size)) : static_cast<long>(sizes.size());
    return std::min<int>(kDeepestHeading, static_cast<int>(rank) + 1);
  };

  std::vector<PdfPageLayout> layouts(pages.size());
  for (std::size_t p = 0; p < pages.size(); ++p) {
    for (LineBlock& block : blocks[p]) {
      PdfBlock out;
      if (block.table != SIZE_MAX) {
        out.kind = PdfBlock::Kind::table;
        out.rows = pages[p].tables[block.table].rows;
      } else if (auto size = heading_size(block.lines, body)) {
        out.kind = PdfBlock::Kind::heading;
        out.level = level_of(*size);
        out.text = join_lines(block.lines);
      } else {
        out.text = join_lines(block.lines);
      }
      layouts[p].blocks.push_back(std::move(out));
    }
    std::vector<const PdfLine*> running;
    for (std::size_t l = 0; l < pages[p].lines.size(); ++l) {
      if (furniture[p][l]) running.push_back(&pages[p].lines[l]);
    }
    std::stable_sort(running.begin(), running.end(),
                     [](const PdfLine* a, const PdfLine* b) { return a->top < b->top; });
    for (const PdfLine* line : running) layouts[p].furniture.push_back(line->text);
  }
  return layouts;
}

}  // namespace kotae::text
