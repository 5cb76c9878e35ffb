// PDF text through poppler-cpp, page by page: poppler's words in reading order (the order pdftotext
// prints by default, which follows columns), each with its box and font, laid out by pdf_layout:
// tables found from the words' positions, headings from their type (so PDF chunks have a
// heading_path), hyphenated words joined, and running headers, footers and page numbers kept after
// the body text, where no chunk holds them. Encrypted files that need a password are refused with a
// clear error; files poppler cannot open are corrupt.
//
// A page without a usable text layer (none: a scan; or mostly not words: a font without a Unicode
// map) is rendered by poppler at 300 dpi (less for a page so large that 300 dpi would pass
// max_image_pixels) and OCR'd (text/loaders/ocr.h), its lines keeping their boxes. A born-digital page
// is never OCR'd. Pages are rendered one at a time (a poppler document is not shared between threads)
// and OCR'd ocr_threads at a time.

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "text/document_metadata.h"
#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/ocr.h"
#include "text/loaders/pdf_layout.h"
#include "text/loaders/utf8_text.h"

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

// Whether a font's name ("ABCDEF+DejaVuSerif-Bold", "Arial,BoldItalic") says its weight is bold.
bool bold_font(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* weight : {"bold", "black", "heavy", "semibold", "demi"}) {
    if (name.find(weight) != std::string::npos) return true;
  }
  return false;
}

std::vector<PdfWord> words_of(const poppler::page& page) {
  std::vector<PdfWord> words;
  for (const poppler::text_box& box : page.text_list(poppler::page::text_list_include_font)) {
    const poppler::rectf r = box.bbox();
    const bool font = box.has_font_info();
    words.push_back({.text = to_utf8(box.text()),
                     .x = r.x(),
                     .y = r.y(),
                     .width = r.width(),
                     .height = r.height(),
                     .font_size = font ? box.get_font_size() : 0,
                     .bold = font && bold_font(box.get_font_name()),
                     .space_after = box.has_space_after()});
  }
  return words;
}

// The Info dictionary's Title, Author, CreationDate and ModDate as the document's own metadata (title,
// author, created, modified; dates in ISO 8601). poppler hands the dates' strings over as written.
void add_info_properties(const poppler::document& pdf, Document& document) {
  struct Property {
    const char* key;
    const char* info_key;
    bool date;
  };
  for (const Property& p : {Property{"title", "Title", false}, Property{"author", "Author", false},
                            Property{"created", "CreationDate", true}, Property{"modified", "ModDate", true}}) {
    std::string value = to_utf8(pdf.info_key(p.info_key));
    if (p.date) value = iso_date_from_pdf(value);
    if (!value.empty()) document.metadata.emplace_back(p.key, std::move(value));
  }
}

std::string page_text(const PdfPageContent& page) {
  std::string text;
  for (const PdfLine& line : page.lines) text.append(line.text).append("\n");
  for (const PdfTable& table : page.tables) {
    for (const auto& row : table.rows) {
      for (const auto& cell : row) text.append(cell).append(" ");
    }
  }
  return text;
}

// Whether a page's text layer is worth keeping: it has text, and most of it is characters rather
// than what a font without a Unicode map gives (U+FFFD, private-use code points, control characters).
// A scan has no text at all; punctuation-heavy pages (a table of contents' dot leaders, code) keep
// theirs.
bool usable_text(std::string_view text) {
  std::size_t visible = 0, garbage = 0;
  for (std::size_t at = 0; at < text.size();) {
    const char32_t c = next_code_point(text, at);
    if (c == ' ' || c == '\n') continue;
    ++visible;
    garbage += c == 0xFFFD || (c >= 0xE000 && c <= 0xF8FF) || c < 0x20;
  }
  return visible > 0 && garbage * 2 < visible;
}

// A page rendered for OCR: 8-bit gray at `dpi`.
struct RenderedPage {
  std::vector<std::uint8_t> gray;
  int width = 0, height = 0, dpi = 0;
  bool blank = false;  // no ink to read: nothing to OCR
};

Result<RenderedPage> render_for_ocr(const poppler::page& page, const LoadLimits& limits) {
  const poppler::rectf box = page.page_rect();
  const double square_inches = std::max(1e-6, (box.width() / 72.0) * (box.height() / 72.0));
  const double dpi = std::min(300.0, std::sqrt(static_cast<double>(limits.max_image_pixels) / square_inches));
  if (dpi < 50) {
    return make_error(ErrorCode::invalid_argument, "a page of " + std::to_string(box.width() / 72.0) + " x " +
                                                       std::to_string(box.height() / 72.0) +
                                                       " inches is too large to OCR within max_image_pixels");
  }
  poppler::page_renderer renderer;
  renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
  const poppler::image image = renderer.render_page(&page, dpi, dpi);
  if (!image.is_valid() || image.format() != poppler::image::format_argb32) {
    return make_error(ErrorCode::corrupt, "corrupt PDF: poppler could not render a page for OCR");
  }
  RenderedPage out{{}, image.width(), image.height(), static_cast<int>(dpi), false};
  out.gray.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height));
  for (int y = 0; y < out.height; ++y) {
    const auto* row = reinterpret_cast<const std::uint8_t*>(image.const_data()) +
                      static_cast<std::ptrdiff_t>(y) * image.bytes_per_row();
    for (int x = 0; x < out.width; ++x) {
      const std::uint8_t* pixel = row + 4 * x;  // B, G, R, A in memory
      out.gray[static_cast<std::size_t>(y) * out.width + x] =
          static_cast<std::uint8_t>((pixel[2] * 299 + pixel[1] * 587 + pixel[0] * 114) / 1000);
    }
  }
  // A page with fewer than one dark pixel in 5,000 has no line of text on it.
  const auto dark = std::count_if(out.gray.begin(), out.gray.end(), [](std::uint8_t v) { return v < 160; });
  out.blank = static_cast<std::size_t>(dark) * 5000 < out.gray.size();
  return out;
}

// OCRs `pages` (indices into the document, in order) into `lines`, ocr_threads at a time, telling
// limits.on_ocr_page of each page read (a blank one too).
Result<void> ocr_pages(poppler::document& pdf, const std::vector<int>& pages, const LoadLimits& limits,
                       std::vector<std::vector<OcrLine>>& lines) {
  std::mutex poppler_mutex, error_mutex, progress_mutex;
  std::optional<Error> first_error;
  std::atomic<std::size_t> next{0};
  const auto pages_total = static_cast<std::uint32_t>(pages.size());
  std::uint32_t pages_done = 0;  // under progress_mutex, which also keeps the calls one at a time
  const auto tell = [&](bool page_read) {
    if (!limits.on_ocr_page) return;
    std::lock_guard lock(progress_mutex);
    if (page_read) ++pages_done;
    limits.on_ocr_page(pages_done, pages_total);
  };
  const auto fail = [&](Error error) {
    std::lock_guard lock(error_mutex);
    if (!first_error) first_error = std::move(error);
  };
  const auto failed = [&] {
    std::lock_guard lock(error_mutex);
    return first_error.has_value();
  };
  const auto work = [&] {
    auto engine = OcrEngine::create(limits.ocr_languages);
    if (!engine) return fail(engine.error());
    for (std::size_t i; !failed() && (i = next++) < pages.size();) {
      if (auto go_on = limits.stop.check(); !go_on) return fail(go_on.error());
      Result<RenderedPage> rendered = make_error(ErrorCode::corrupt, "corrupt PDF: a page could not be read for OCR");
      {
        std::lock_guard lock(poppler_mutex);
        std::unique_ptr<poppler::page> page(pdf.create_page(pages[i]));
        if (page) rendered = render_for_ocr(*page, limits);
      }
      if (!rendered) return fail(rendered.error());
      if (rendered->blank) {
        tell(true);
        continue;
      }
      auto read =
          (*engine)->read({rendered->gray.data(), rendered->width, rendered->height, rendered->width, rendered->dpi},
                          limits.ocr_page_seconds);
      if (!read)
        return fail(
            make_error(read.error().code, "page " + std::to_string(pages[i] + 1) + ": " + read.error().message));
      lines[i] = std::move(*read);
      tell(true);
    }
  };
  tell(false);
  const std::size_t threads = std::clamp<std::size_t>(limits.ocr_threads, 1, pages.size());
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (auto& helper : helpers) helper.join();
  if (first_error) return *first_error;
  return {};
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

  // Each page's text layer first; the pages without a usable one are OCR'd after.
  std::vector<PdfPageContent> contents(static_cast<std::size_t>(page_count));
  std::vector<int> scanned;
  for (int index = 0; index < page_count; ++index) {
    if (auto go_on = limits.stop.check(); !go_on) return go_on.error();
    std::unique_ptr<poppler::page> page(pdf->create_page(index));
    if (!page) continue;  // a damaged page object: the other pages are still worth having
    const poppler::rectf box = page->page_rect();
    PdfPageContent& content = contents[static_cast<std::size_t>(index)];
    content = read_pdf_page(words_of(*page), box.width(), box.height());
    if (!usable_text(page_text(content))) {
      content = {};  // nothing of it to lay out: its OCR'd lines, if any, stand in
      if (!limits.ocr_languages.empty()) scanned.push_back(index);
    }
  }
  if (scanned.size() > limits.max_ocr_pages) {
    return make_error(ErrorCode::invalid_argument, "PDF has " + std::to_string(scanned.size()) +
                                                       " pages that need OCR, over max_ocr_pages (" +
                                                       std::to_string(limits.max_ocr_pages) + ")");
  }
  std::vector<std::vector<OcrLine>> ocr_lines(scanned.size());
  if (!scanned.empty()) {
    if (auto read = ocr_pages(*pdf, scanned, limits, ocr_lines); !read) return read.error();
  }

  const std::vector<PdfPageLayout> layouts = lay_out_pdf(contents);
  contents.clear();
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  std::size_t next_scanned = 0;
  for (int index = 0; index < page_count && !builder.stopped(); ++index) {
    builder.set_page(static_cast<std::uint32_t>(index + 1));
    if (next_scanned < scanned.size() && scanned[next_scanned] == index) {
      builder.add_ocr_lines(ocr_lines[next_scanned++]);
      continue;
    }
    for (const PdfBlock& block : layouts[static_cast<std::size_t>(index)].blocks) {
      switch (block.kind) {
        case PdfBlock::Kind::heading: builder.add_heading(block.level, block.text); break;
        case PdfBlock::Kind::table: builder.add_table({.name = "", .rows = block.rows, .row_numbers = {}}); break;
        case PdfBlock::Kind::paragraph: builder.add_paragraph(block.text); break;
      }
    }
  }
  for (int index = 0; index < page_count && !builder.stopped(); ++index) {
    builder.set_page(static_cast<std::uint32_t>(index + 1));
    for (const std::string& line : layouts[static_cast<std::size_t>(index)].furniture) builder.add_furniture(line);
  }
  auto document = std::move(builder).finish("pdf", to_utf8(pdf->get_title()), static_cast<std::uint32_t>(page_count));
  if (document) add_info_properties(*pdf, *document);
  return document;
}

}  // namespace kotae::text
