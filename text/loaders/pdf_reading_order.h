#pragma once
// The order in which people read the blocks of a page, from where they are: a recursive XY cut. A
// region is cut into horizontal bands at the white between them, read top to bottom, but bands that
// keep a vertical strip of white (a gutter) open are read together as one run of columns: two columns
// whose paragraphs happen to end at the same height are still read one column after the other, while
// a full-width heading or table above or below them is read in its place (and a band under one column
// only goes on with it when it follows that column's last line at a line's distance: a longer column's
// end, not a narrow heading after the columns). A run is read column by column, left to right. poppler's
// own order goes wrong where two columns' tops are not level (a browser's balanced columns).

#include <cstddef>
#include <span>
#include <vector>

namespace kotae::text {

struct PageBox {
  double left = 0, top = 0, right = 0, bottom = 0;  // points, y growing down the page
};

// More boxes than this on a page (a hostile file, a dense data sheet) keep the order they came in: the
// cut's work grows with the square of their number.
constexpr std::size_t kMaxOrderedBoxes = 2000;

// The indices of `boxes` in reading order. `gutter`: the narrowest white strip that parts columns,
// about a line's height.
std::vector<std::size_t> reading_order(std::span<const PageBox> boxes, double gutter);

}  // namespace kotae::text
