#pragma once
// The HTML loader's reading, for loaders whose documents hold HTML (EPUB's chapters): appends one HTML
// or XHTML document's blocks to a builder (html_loader.cpp says what is read and what is dropped).

#include <string>
#include <string_view>

#include "core/result.h"
#include "text/loaders/document_builder.h"
#include "text/loaders/loader.h"

namespace kotae::text {

// Appends the page's headings and paragraphs to `out`; returns its <title> ("" when none).
Result<std::string> read_html(DocumentBuilder& out, std::string_view bytes, const LoadLimits& limits);

}  // namespace kotae::text
