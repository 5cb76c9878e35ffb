// The image loader (text/loaders/image_loader.cpp) as production runs it, OCR on: the input is a whole
// PNG, JPEG, TIFF or WebP file, named by its magic bytes (the loader itself goes by them, whatever the
// name says; an input with none is named .png, as a mislabelled upload would be). The limits are
// tight so that Tesseract, which is not ours to fuzz, takes a small share of each input: at most a
// megapixel a page, 4 pages, half a second of recognition a page, one OCR thread. Every input must
// give a Document that keeps its contract (its line boxes too: in text order, one line each, inside
// the page), or an Error; and the loader's OCR progress must be what LoadLimits::on_ocr_page
// promises: 0 first, then one call per page, pages_done rising by one to the total, which never
// changes and is within max_ocr_pages.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/document_contract.h"
#include "text/loaders/loader.h"

namespace {

std::string_view format_of(std::string_view bytes) {
  if (bytes.starts_with("\xff\xd8")) return "jpg";
  if (bytes.starts_with("II*") || bytes.starts_with("MM\0*") || bytes.starts_with("II+") ||
      bytes.starts_with("MM\0+")) {
    return "tiff";
  }
  if (bytes.starts_with("RIFF") && bytes.size() >= 12 && bytes.substr(8, 4) == "WEBP") return "webp";
  return "png";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kotae::text::LoadLimits limits;
  limits.max_file_bytes = 1 << 20;
  limits.max_text_bytes = 1 << 20;
  limits.ocr_languages = "eng";
  limits.max_image_pixels = 1 << 20;
  limits.max_ocr_pages = 4;
  limits.ocr_page_seconds = 0.5;
  limits.ocr_threads = 1;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> told;
  limits.on_ocr_page = [&](std::uint32_t done, std::uint32_t total) { told.emplace_back(done, total); };

  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string format(format_of(bytes));
  auto doc = kotae::text::load_document_bytes(bytes, format, limits);
  for (std::size_t i = 0; i < told.size(); ++i) {
    KOTAE_ASSERT(told[i].first == i);
    KOTAE_ASSERT(told[i].second == told[0].second);
    KOTAE_ASSERT(told[i].second >= 1 && told[i].second <= limits.max_ocr_pages);
  }
  if (doc) {
    KOTAE_ASSERT(doc->format == format);
    KOTAE_ASSERT(!told.empty() && told.back().first == told.back().second);  // every page was read
    KOTAE_ASSERT(doc->pages == told.back().second);
    std::size_t previous_end = 0;
    for (const auto& box : doc->boxes) {  // each a line of the text, in order, inside its page
      KOTAE_ASSERT(previous_end <= box.begin && box.begin < box.end && box.end <= doc->text.size());
      KOTAE_ASSERT(doc->text.substr(box.begin, box.end - box.begin).find('\n') == std::string::npos);
      KOTAE_ASSERT(box.page >= 1 && box.page <= doc->pages);
      KOTAE_ASSERT(0 <= box.left && box.left <= box.right && box.right <= 1);
      KOTAE_ASSERT(0 <= box.top && box.top <= box.bottom && box.bottom <= 1);
      previous_end = box.end;
    }
    kotae::fuzz::check_document_contract(*doc);
  } else {
    KOTAE_ASSERT(!doc.error().message.empty());
  }
  return 0;
}
