// PNG, JPEG, TIFF (every page) and WebP images to text by OCR: Leptonica (Tesseract's own image
// library) decodes them, after every page's width and height, read from the headers, passed
// max_image_pixels and the pages were counted against max_ocr_pages: a 50,000 x 50,000 pixel image,
// or a TIFF of 100,000 pages, is refused before a byte of it is decompressed and before Tesseract
// loads. Leptonica also reads BMP, PNM, GIF, JPEG 2000 and its own formats, some of which it decodes
// whole to learn their size; they are refused from their magic bytes. Each image (a TIFF's page) is a
// page of the document; its lines keep their boxes.

#include <leptonica/allheaders.h>

#include <cstdint>
#include <cstdio>
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

// The formats read here, known from their magic bytes alone (Leptonica's header reader decodes a
// GIF whole, with no size limit, to learn its size).
bool readable_format(l_int32 format) {
  return format == IFF_PNG || format == IFF_JFIF_JPEG || format == IFF_WEBP || L_FORMAT_IS_TIFF(format);
}

// Resolutions outside what a scan has (a missing or absurd header field) are read as 300 dpi.
int credible_dpi(int resolution) {
  return resolution >= 70 && resolution <= 2400 ? resolution : 300;
}

struct ImagePages {
  bool tiff = false;
  std::vector<std::uint64_t> pixels;  // each page's width x height, as its header says
};

// Every page's size from the headers alone: one page, or a TIFF's pages (at most max_ocr_pages of
// them are counted; one more is an error), each within max_image_pixels.
Result<ImagePages> image_pages(const l_uint8* data, std::size_t size, const LoadLimits& limits) {
  const Error unreadable =
      make_error(ErrorCode::corrupt, "corrupt image: not a PNG, JPEG, TIFF or WebP file Leptonica can read");
  l_int32 format = IFF_UNKNOWN;
  // Leptonica reads up to 12 bytes of magic whatever the size.
  if (size < 12 || findFileFormatBuffer(data, &format) != 0 || !readable_format(format)) return unreadable;
  ImagePages out;
  out.tiff = L_FORMAT_IS_TIFF(format);
  if (out.tiff) {  // counted in one pass first: reading the n-th page's header walks the n before it
    l_int32 count = 0;
    if (FILE* file = fmemopen(const_cast<l_uint8*>(data), size, "rb"); file != nullptr) {
      if (tiffGetCount(file, &count) != 0) count = 0;
      std::fclose(file);
    }
    if (count > 0 && static_cast<std::uint64_t>(count) > limits.max_ocr_pages) {
      return make_error(ErrorCode::invalid_argument, "TIFF has " + std::to_string(count) +
                                                         " pages, over max_ocr_pages (" +
                                                         std::to_string(limits.max_ocr_pages) + ")");
    }
  }
  for (l_int32 n = 0;; ++n) {
    l_int32 width = 0, height = 0, bps = 0, spp = 0, colormap = 0, resolution = 0, compression = 0, read_format = 0;
    const bool read =
        out.tiff
            ? readHeaderMemTiff(data, size, n, &width, &height, &bps, &spp, &resolution, &colormap, &compression) == 0
            : pixReadHeaderMem(data, size, &read_format, &width, &height, &bps, &spp, &colormap) == 0;
    if (!read) {
      if (n > 0) break;  // the TIFF's last page was the one before
      return unreadable;
    }
    if (width <= 0 || height <= 0) return make_error(ErrorCode::corrupt, "corrupt image: a page has no pixels");
    const std::uint64_t pixels = static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height);
    if (pixels > limits.max_image_pixels) return too_large(width, height, limits);
    if (out.pixels.size() == limits.max_ocr_pages) {
      return make_error(ErrorCode::invalid_argument,
                        "image has more pages than max_ocr_pages (" + std::to_string(limits.max_ocr_pages) + ")");
    }
    out.pixels.push_back(pixels);
    if (!out.tiff) break;
  }
  return out;
}

}  // namespace

Result<Document> load_image(std::string_view bytes, const LoadLimits& limits, const std::string& format) {
  if (limits.ocr_languages.empty()) return make_error(ErrorCode::unsupported, "OCR is off (ocr_languages is empty)");
  silence_leptonica();
  const auto* data = reinterpret_cast<const l_uint8*>(bytes.data());
  const auto pages = image_pages(data, bytes.size(), limits);
  if (!pages) return pages.error();
  const auto pages_total = static_cast<std::uint32_t>(pages->pixels.size());
  if (limits.on_ocr_page) limits.on_ocr_page(0, pages_total);

  std::unique_ptr<OcrEngine> engine;  // loaded once a page decodes: a broken image never costs it
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  std::uint32_t decoded = 0;
  for (std::uint32_t n = 0; n < pages_total && !builder.stopped(); ++n) {
    PixPtr pix(pages->tiff ? pixReadMemTiff(data, bytes.size(), static_cast<l_int32>(n))
                           : pixReadMem(data, bytes.size()));
    // A damaged page of a TIFF is skipped, as a PDF's is: the other pages are still worth having. A
    // decoder that made more pixels than the header it was judged by said is not believed either.
    const bool readable = pix && static_cast<std::uint64_t>(pixGetWidth(pix.get())) *
                                         static_cast<std::uint64_t>(pixGetHeight(pix.get())) <=
                                     pages->pixels[n];
    int gray_width = 0, gray_height = 0;
    const std::vector<std::uint8_t> gray =
        readable ? gray_pixels(pix.get(), gray_width, gray_height) : std::vector<std::uint8_t>();
    const int resolution = readable ? credible_dpi(pixGetXRes(pix.get())) : 300;
    pix.reset();
    if (!gray.empty()) {
      if (!engine) {
        auto created = OcrEngine::create(limits.ocr_languages);
        if (!created) return created.error();
        engine = std::move(*created);
      }
      auto lines =
          engine->read({gray.data(), gray_width, gray_height, gray_width, resolution}, limits.ocr_page_seconds);
      if (!lines) return lines.error();
      ++decoded;
      builder.set_page(n + 1);
      builder.add_ocr_lines(*lines);
    }
    if (limits.on_ocr_page) limits.on_ocr_page(n + 1, pages_total);
  }
  if (decoded == 0 && !builder.stopped()) {
    return make_error(ErrorCode::corrupt, "corrupt image: Leptonica could not decode it");
  }
  return std::move(builder).finish(format, "", pages_total);
}

}  // namespace kotae::text
