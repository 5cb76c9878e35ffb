#include "text/loaders/pdf_reading_order.h"

#include <algorithm>

namespace kotae::text {
namespace {

using Group = std::vector<std::size_t>;

// Splits `group` where the boxes' spans along one axis leave white of at least `min_gap` (any white
// at all when min_gap is 0), in order along that axis.
template <class Begin, class End>
std::vector<Group> split(std::span<const PageBox> boxes, Group group, double min_gap, Begin begin, End end) {
  std::stable_sort(group.begin(), group.end(),
                   [&](std::size_t a, std::size_t b) { return begin(boxes[a]) < begin(boxes[b]); });
  std::vector<Group> parts;
  double reach = 0;  // how far the current part extends
  for (const std::size_t i : group) {
    if (parts.empty() || begin(boxes[i]) - reach > min_gap) {
      parts.emplace_back();
      reach = end(boxes[i]);
    }
    reach = std::max(reach, end(boxes[i]));
    parts.back().push_back(i);
  }
  return parts;
}

std::vector<Group> columns(std::span<const PageBox> boxes, const Group& group, double gutter) {
  return split(
      boxes, group, gutter, [](const PageBox& b) { return b.left; }, [](const PageBox& b) { return b.right; });
}

std::vector<Group> bands(std::span<const PageBox> boxes, const Group& group) {
  return split(
      boxes, group, 0, [](const PageBox& b) { return b.top; }, [](const PageBox& b) { return b.bottom; });
}

// Whether `band` goes on with the columns of `run`: the gutter stays open, and the band either spans
// several of the columns or continues one of them at a line's distance (a longer column's last lines);
// a band under one column after a wider gap starts what follows the columns (a narrow heading).
bool goes_on(std::span<const PageBox> boxes, const Group& run, const Group& band, double line) {
  const std::vector<Group> cols = columns(boxes, run, line);
  if (cols.size() < 2) return false;
  Group joined = run;
  joined.insert(joined.end(), band.begin(), band.end());
  if (columns(boxes, joined, line).size() < 2) return false;
  std::vector<std::size_t> used;  // the run's columns the band falls in
  double top = boxes[band.front()].top;
  for (const std::size_t i : band) {
    top = std::min(top, boxes[i].top);
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const bool inside = std::any_of(cols[c].begin(), cols[c].end(), [&](std::size_t k) {
        return boxes[i].left < boxes[k].right && boxes[k].left < boxes[i].right;
      });
      if (inside && std::find(used.begin(), used.end(), c) == used.end()) used.push_back(c);
    }
  }
  if (used.size() != 1) return true;
  double bottom = 0;  // where that column ends so far
  for (const std::size_t k : cols[used.front()]) bottom = std::max(bottom, boxes[k].bottom);
  return top - bottom <= line;
}

void order(std::span<const PageBox> boxes, const Group& group, double gutter, std::vector<std::size_t>& out) {
  if (group.size() <= 1) {
    out.insert(out.end(), group.begin(), group.end());
    return;
  }
  // Bands top to bottom, those that go on with the columns above them read together with them.
  const std::vector<Group> rows = bands(boxes, group);
  std::vector<Group> runs{rows.front()};
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (goes_on(boxes, runs.back(), rows[r], gutter)) {
      runs.back().insert(runs.back().end(), rows[r].begin(), rows[r].end());
    } else {
      runs.push_back(rows[r]);
    }
  }
  if (runs.size() > 1) {
    for (const Group& run : runs) order(boxes, run, gutter, out);
    return;
  }
  // One run: its columns left to right, each read the same way.
  if (const auto cols = columns(boxes, group, gutter); cols.size() > 1) {
    for (const Group& col : cols) order(boxes, col, gutter, out);
    return;
  }
  // Neither cut: boxes overlap both ways; top to bottom, left to right.
  Group sorted = group;
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) {
    return boxes[a].top != boxes[b].top ? boxes[a].top < boxes[b].top : boxes[a].left < boxes[b].left;
  });
  out.insert(out.end(), sorted.begin(), sorted.end());
}

}  // namespace

std::vector<std::size_t> reading_order(std::span<const PageBox> boxes, double gutter) {
  Group all(boxes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (boxes.size() > kMaxOrderedBoxes) return all;
  std::vector<std::size_t> out;
  out.reserve(boxes.size());
  order(boxes, all, gutter, out);
  return out;
}

}  // namespace kotae::text
