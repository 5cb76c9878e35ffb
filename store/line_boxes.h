#pragma once
// A chunk's OCR'd lines (text::TextBox: document bytes, page, box as fractions of the page) as the
// store keeps them: one compact JSON array per chunk, [[begin, end, page, left, top, right, bottom],
// ...], in the chunks table's `boxes` column of both back-ends.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "text/document.h"

namespace kotae::store {

std::string line_boxes_json(const std::vector<text::TextBox>& boxes);

// corrupt, naming what is wrong, when the text is not as line_boxes_json writes it.
Result<std::vector<text::TextBox>> line_boxes_from_json(std::string_view json);

}  // namespace kotae::store
