// PNG, JPEG, TIFF (every page) and WebP images to text by OCR: Leptonica (Tesseract's own image
// library) decodes them, after their headers' width and height passed max_image_pixels, so a
// 50,000 x 50,000 pixel image is refused before a byte of it is decompressed. Each image (a TIFF's
// page) is a page of the document; its lines keep their boxes.

#include <leptonica/allheaders.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/ocr.h"

namespace kotae::text {
namespace {

struct DestroyPix {
  void operator()(PIX* pix) const { pixDestroy(&pix); }
};
using PixPtr = std::unique_ptr<PIX, DestroyPix>;

// Leptonica reports every problem of a broken image on stderr; the loader returns it as a Result.
void silence_leptonica() {
  static std::once_flag silenced;
  std::call_once(silenced, [] { setMsgSeverity(L_SEVERITY_NONE); });
}

Error too_large(std::int64_t width, std::int64_t height, const LoadLimits& limits) {
  return make_error(ErrorCode::invalid_argument, "image of " + std::to_string(width) + " x " + std::to_string(height) +
                                                     " pixels, over max_image_pixels (" +
                                                     std::to_string(limits.max_image_pixels) + ")");
}

// The image as 8-bit gray, rows packed.
std::vector<std::uint8_t> gray_pixels(PIX* pix, int& width, int& height) {
  PixPtr gray(pixConvertTo8(pix, 0));
  width = height = 0;
  if (!gray) return {};
  width = pixGetWidth(gray.get());
  height = pixGetHeight(gray.get());
  std::vector<std::uint8_t> out(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  const l_uint32* data = pixGetData(gray.get());
  const int words_per_line = pixGetWpl(gray.get());
  for (int y = 0; y < height; ++y) {
    const l_uint32* line = data + static_cast<std::ptrdiff_t>(y) * words_per_line;
    for (int x = 0; x < width; ++x) out[static_cast<std::size_t>(y) * width + x] = GET_DATA_BYTE(line, x);
  }
  return out;
}

}  // namespace

Result<Document> load_image(std::string_view bytes, const LoadLimits& limits, const std::string& format) {
  if (limits.ocr_languages.empty()) return make_error(ErrorCode::unsupported, "OCR is off (ocr_languages is empty)");
  silence_leptonica();
  const auto* data = reinterpret_cast<const l_uint8*>(bytes.data());
  l_int32 file_format = 0, width = 0, height = 0, bps = 0, spp = 0, colormap = 0;
  if (pixReadHeaderMem(data, bytes.size(), &file_format, &width, &height, &bps, &spp, &colormap) != 0) {
    return make_error(ErrorCode::corrupt, "corrupt image: not a PNG, JPEG, TIFF or WebP file Leptonica can read");
  }
  const bool tiff = L_FORMAT_IS_TIFF(file_format);
  auto engine = OcrEngine::create(limits.ocr_languages);
  if (!engine) return engine.error();

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  std::uint32_t pages = 0;
  for (l_int32 n = 0; !builder.stopped(); ++n) {
    if (tiff && n > 0) {  // the next page's header, if there is a next page
      l_int32 resolution = 0, cmap = 0, compression = 0;
      if (readHeaderMemTiff(data, bytes.size(), n, &width, &height, &bps, &spp, &resolution, &cmap, &compression) !=
          0) {
        break;
      }
    }
    if (static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height) > limits.max_image_pixels) {
      return too_large(width, height, limits);
    }
    if (pages == limits.max_ocr_pages) {
      return make_error(ErrorCode::invalid_argument,
                        "image has more pages than max_ocr_pages (" + std::to_string(limits.max_ocr_pages) + ")");
    }
    PixPtr pix(tiff ? pixReadMemTiff(data, bytes.size(), n) : pixReadMem(data, bytes.size()));
    if (!pix) {
      if (pages > 0) break;
      return make_error(ErrorCode::corrupt, "corrupt image: Leptonica could not decode it");
    }
    int gray_width = 0, gray_height = 0;
    const std::vector<std::uint8_t> gray = gray_pixels(pix.get(), gray_width, gray_height);
    const int resolution = pixGetXRes(pix.get());
    pix.reset();
    if (gray.empty()) return make_error(ErrorCode::corrupt, "corrupt image: Leptonica could not convert it to gray");
    auto lines =
        (*engine)->read({gray.data(), gray_width, gray_height, gray_width, resolution >= 70 ? resolution : 300},
                        limits.ocr_page_seconds);
    if (!lines) return lines.error();
    builder.set_page(++pages);
    builder.add_ocr_lines(*lines);
    if (!tiff) break;
  }
  return std::move(builder).finish(format, "", pages);
}

}  // namespace kotae::text
