#include "store/line_boxes.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace kotae::store {

std::string line_boxes_json(const std::vector<text::TextBox>& boxes) {
  nlohmann::json out = nlohmann::json::array();
  // Four decimals of a page's width place a line within a tenth of a millimetre on A4.
  const auto rounded = [](float f) { return static_cast<double>(std::lround(f * 1e4f)) / 1e4; };
  for (const auto& b : boxes) {
    out.push_back({b.begin, b.end, b.page, rounded(b.left), rounded(b.top), rounded(b.right), rounded(b.bottom)});
  }
  return out.dump();
}

Result<std::vector<text::TextBox>> line_boxes_from_json(std::string_view json) {
  const auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return make_error(ErrorCode::corrupt, "line boxes that are not a JSON array");
  std::vector<text::TextBox> boxes;
  for (const auto& b : parsed) {
    if (!b.is_array() || b.size() != 7 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() ||
        !b[2].is_number_unsigned() || !b[3].is_number() || !b[4].is_number() || !b[5].is_number() ||
        !b[6].is_number()) {
      return make_error(ErrorCode::corrupt, "a line box that is not [begin, end, page, left, top, right, bottom]");
    }
    boxes.push_back({b[0].get<std::size_t>(), b[1].get<std::size_t>(), b[2].get<std::uint32_t>(), b[3].get<float>(),
                     b[4].get<float>(), b[5].get<float>(), b[6].get<float>()});
  }
  return boxes;
}

}  // namespace kotae::store
