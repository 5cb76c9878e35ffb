#pragma once
// Scans made by the tests: a born-digital PDF's pages rendered by poppler as 8-bit gray Leptonica
// images, written as an image file or an image-only PDF (Leptonica's PDF writer: each page one
// picture, no text), as a scanner makes them.

#include <leptonica/allheaders.h>
#include <poppler-document.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>

#include <memory>
#include <string>
#include <vector>

namespace kotae::testing {

struct DestroyPix {
  void operator()(PIX* pix) const { pixDestroy(&pix); }
};
using PixPtr = std::unique_ptr<PIX, DestroyPix>;

// Page `index` of a PDF rendered as an 8-bit gray image at `dpi`.
inline PixPtr render_page(poppler::document& pdf, int index, double dpi) {
  std::unique_ptr<poppler::page> page(pdf.create_page(index));
  poppler::page_renderer renderer;
  renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
  const poppler::image image = renderer.render_page(page.get(), dpi, dpi);
  PixPtr pix(pixCreate(image.width(), image.height(), 8));
  pixSetResolution(pix.get(), static_cast<int>(dpi), static_cast<int>(dpi));
  l_uint32* data = pixGetData(pix.get());
  const int wpl = pixGetWpl(pix.get());
  for (int y = 0; y < image.height(); ++y) {
    const auto* row = reinterpret_cast<const unsigned char*>(image.const_data()) + y * image.bytes_per_row();
    for (int x = 0; x < image.width(); ++x) {
      const unsigned char* p = row + 4 * x;  // B, G, R, A in memory
      SET_DATA_BYTE(data + y * wpl, x, (p[2] * 299 + p[1] * 587 + p[0] * 114) / 1000);
    }
  }
  return pix;
}

// An image in one of Leptonica's formats (IFF_PNG, IFF_JFIF_JPEG, IFF_TIFF_G4, IFF_WEBP...); "" if it fails.
inline std::string encode_image(PIX* pix, int format) {
  l_uint8* bytes = nullptr;
  size_t size = 0;
  if (pixWriteMem(&bytes, &size, pix, format) != 0) return {};
  std::string out(reinterpret_cast<const char*>(bytes), size);
  lept_free(bytes);
  return out;
}

// An image-only PDF of `pages` at `dpi`; "" if it fails.
inline std::string scanned_pdf(const std::vector<PIX*>& pages, int dpi) {
  PIXA* all = pixaCreate(static_cast<l_int32>(pages.size()));
  for (PIX* page : pages) pixaAddPix(all, page, L_COPY);
  l_uint8* bytes = nullptr;
  size_t size = 0;
  const bool ok = pixaConvertToPdfData(all, dpi, 1.0, L_FLATE_ENCODE, 0, "scan", &bytes, &size) == 0;
  pixaDestroy(&all);
  if (!ok) return {};
  std::string out(reinterpret_cast<const char*>(bytes), size);
  lept_free(bytes);
  return out;
}

}  // namespace kotae::testing
