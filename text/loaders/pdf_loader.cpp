// PDF text through poppler-cpp, page by page: poppler's words in reading order (the order pdftotext
// prints by default), joined into lines and blocks by pdf_page_text, which keeps the hyphens, dashes,
// quotes and ligatures the PDF shows; each page's text kept with its 1-based page number. Encrypted files that need a
// password are refused with a clear error; files poppler cannot open are corrupt.

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/pdf_page_text.h"

namespace kotae::text {
namespace {

std::string to_utf8(const poppler::ustring& text) {
  const poppler::byte_array bytes = text.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

// poppler prints every syntax problem of a damaged file on stderr by default; the loader reports
// what matters as a Result instead. The handler is process-wide, so it is set once.
void silence_poppler() {
  static std::once_flag silenced;
  std::call_once(silenced, [] { poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr); });
}

std::vector<PdfWord> words_of(const poppler::page& page) {
  std::vector<PdfWord> words;
  for (const poppler::text_box& box : page.text_list()) {
    const poppler::rectf r = box.bbox();
    words.push_back({.text = to_utf8(box.text()),
                     .x = r.x(),
                     .y = r.y(),
                     .width = r.width(),
                     .height = r.height(),
                     .space_after = box.has_space_after()});
  }
  return words;
}

}  // namespace

Result<Document> load_pdf(std::string_view bytes, const LoadLimits& limits) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    return make_error(ErrorCode::invalid_argument, "PDF is too large for poppler (over 2 GiB)");
  }
  if (!bytes.starts_with("%PDF-") && bytes.substr(0, 1024).find("%PDF-") == std::string_view::npos) {
    return make_error(ErrorCode::corrupt, "not a PDF file (no %PDF- header)");
  }
  silence_poppler();
  // poppler reads `bytes` in place; they outlive `pdf`.
  std::unique_ptr<poppler::document> pdf(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (!pdf) return make_error(ErrorCode::corrupt, "corrupt PDF: poppler could not open it");
  if (pdf->is_locked()) {
    return make_error(ErrorCode::unsupported, "PDF is encrypted and needs a password to open");
  }
  const int page_count = pdf->pages();
  if (page_count <= 0) return make_error(ErrorCode::corrupt, "corrupt PDF: it has no pages");
  if (static_cast<std::uint32_t>(page_count) > limits.max_pages) {
    return make_error(
        ErrorCode::invalid_argument,
        "PDF has " + std::to_string(page_count) + " pages, over max_pages (" + std::to_string(limits.max_pages) + ")");
  }

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  for (int index = 0; index < page_count && !builder.stopped(); ++index) {
    std::unique_ptr<poppler::page> page(pdf->create_page(index));
    if (!page) continue;  // a damaged page object: the other pages are still worth having
    builder.set_page(static_cast<std::uint32_t>(index + 1));
    builder.add_paragraph(pdf_page_text(words_of(*page)));
  }
  return std::move(builder).finish("pdf", to_utf8(pdf->get_title()), static_cast<std::uint32_t>(page_count));
}

}  // namespace kotae::text
