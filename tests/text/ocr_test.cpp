// OCR (text/loaders/ocr, image_loader, the PDF loader's scanned pages) on real scans made here: pages
// of examples/docs' PDF rendered by poppler at 300 dpi, written as PNG, JPEG, TIFF and WebP by
// Leptonica, and as an image-only PDF (Leptonica's PDF writer: a page that is one picture, no text),
// then read back by Tesseract and compared with the PDF's own text layer.

#include <gtest/gtest.h>
#include <leptonica/allheaders.h>
#include <poppler-document.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/scans.h"
#include "text/loaders/loader.h"
#include "text/loaders/ocr.h"

namespace kotae::text {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

using testing::encode_image;
using testing::PixPtr;
using testing::render_page;
using testing::scanned_pdf;

// The words of a text, lower-cased, punctuation trimmed.
std::multiset<std::string> words_of(const std::string& text) {
  std::multiset<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    std::string w;
    for (const char c : word) {
      if (std::isalnum(static_cast<unsigned char>(c))) w += static_cast<char>(std::tolower(c));
    }
    if (w.size() >= 3) words.insert(w);
  }
  return words;
}

// The share of `expected`'s words that `actual` holds (counting repeats).
double word_recall(const std::string& expected, const std::string& actual) {
  const auto want = words_of(expected);
  auto have = words_of(actual);
  std::size_t found = 0;
  for (const auto& w : want) {
    if (const auto it = have.find(w); it != have.end()) {
      ++found;
      have.erase(it);
    }
  }
  return want.empty() ? 1.0 : static_cast<double>(found) / static_cast<double>(want.size());
}

// What a loader told LoadLimits::on_ocr_page: (pages done, pages in all), call by call.
using Progress = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
using Told = std::shared_ptr<Progress>;
Told tell_into(LoadLimits& limits) {
  auto told = std::make_shared<Progress>();
  auto mutex = std::make_shared<std::mutex>();
  limits.on_ocr_page = [told, mutex](std::uint32_t done, std::uint32_t total) {
    std::lock_guard lock(*mutex);
    told->emplace_back(done, total);
  };
  return told;
}

class OcrTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pdf_bytes_ = new std::string(read_file(fs::path(KOTAE_EXAMPLES_DIR) / "sqlite-when-to-use.pdf"));
    pdf_.reset(poppler::document::load_from_raw_data(pdf_bytes_->data(), static_cast<int>(pdf_bytes_->size())));
    ASSERT_TRUE(pdf_);
    born_digital_ = new Document(*load_document_bytes(*pdf_bytes_, "pdf"));
    page_one_ = render_page(*pdf_, 0, 300).release();
  }
  static void TearDownTestSuite() {
    PIX* pix = page_one_;
    pixDestroy(&pix);
    pdf_.reset();
    delete born_digital_;
    delete pdf_bytes_;
  }
  static std::string page_text(const Document& doc, std::uint32_t page) {
    std::string text;
    for (const auto& s : doc.segments) {
      if (s.page == page) text += doc.text.substr(s.begin, s.end - s.begin) + "\n";
    }
    return text;
  }

  static inline std::string* pdf_bytes_ = nullptr;
  static inline std::unique_ptr<poppler::document> pdf_;
  static inline Document* born_digital_ = nullptr;
  static inline PIX* page_one_ = nullptr;
};

TEST_F(OcrTest, ImagesOfAPageReadAsItsTextWithABoxPerLine) {
  const std::string expected = page_text(*born_digital_, 1);
  for (const auto& [format, lept_format] :
       std::vector<std::pair<std::string, int>>{{"png", IFF_PNG}, {"jpg", IFF_JFIF_JPEG}, {"webp", IFF_WEBP}}) {
    auto doc = load_document_bytes(encode_image(page_one_, lept_format), format);
    ASSERT_TRUE(doc) << format << ": " << doc.error().message;
    EXPECT_EQ(doc->format, format);
    EXPECT_EQ(doc->pages, 1u);
    EXPECT_GE(word_recall(expected, doc->text), 0.97) << format << ":\n" << doc->text;
    ASSERT_FALSE(doc->boxes.empty());
    std::size_t previous_end = 0;
    for (const TextBox& box : doc->boxes) {
      ASSERT_LT(box.begin, box.end);
      ASSERT_LE(box.end, doc->text.size());
      EXPECT_GE(box.begin, previous_end);  // in text order, not overlapping
      previous_end = box.end;
      EXPECT_EQ(doc->text.substr(box.begin, box.end - box.begin).find('\n'), std::string::npos);  // one line
      EXPECT_EQ(box.page, 1u);
      EXPECT_TRUE(0 <= box.left && box.left < box.right && box.right <= 1) << box.left << " " << box.right;
      EXPECT_TRUE(0 <= box.top && box.top < box.bottom && box.bottom <= 1) << box.top << " " << box.bottom;
    }
  }
  // The title is the first line, at the top of the page.
  auto png = load_document_bytes(encode_image(page_one_, IFF_PNG), "png");
  ASSERT_TRUE(png);
  EXPECT_TRUE(png->text.starts_with("Appropriate Uses For SQLite")) << png->text.substr(0, 80);
  EXPECT_LT(png->boxes.front().top, 0.15);
}

TEST_F(OcrTest, AScannedPdfIsOcrdPageByPageAndABornDigitalOneNever) {
  EXPECT_TRUE(born_digital_->boxes.empty());
  // An image-only PDF of the first two pages, as a scanner makes one.
  PixPtr page_two = render_page(*pdf_, 1, 300);
  const std::string scan = scanned_pdf({page_one_, page_two.get()}, 300);
  ASSERT_FALSE(scan.empty());

  LoadLimits limits;
  limits.ocr_threads = 2;
  const Told told = tell_into(limits);
  auto doc = load_document_bytes(scan, "pdf", limits);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->pages, 2u);
  EXPECT_EQ(*told, (Progress{{0, 2}, {1, 2}, {2, 2}}));  // from two OCR threads, one call at a time, in order
  for (std::uint32_t page : {1u, 2u}) {
    EXPECT_GE(word_recall(page_text(*born_digital_, page), page_text(*doc, page)), 0.97) << page_text(*doc, page);
  }
  EXPECT_TRUE(std::any_of(doc->boxes.begin(), doc->boxes.end(), [](const TextBox& b) { return b.page == 2; }));

  limits.max_ocr_pages = 1;
  auto over = load_document_bytes(scan, "pdf", limits);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("max_ocr_pages (1)"), std::string::npos) << over.error().message;

  limits = {};
  limits.ocr_languages = "";  // OCR off: a scan has no text
  auto off = load_document_bytes(scan, "pdf", limits);
  ASSERT_FALSE(off);
  EXPECT_NE(off.error().message.find("no text"), std::string::npos) << off.error().message;
}

TEST_F(OcrTest, LimitsAreCheckedBeforeTheWorkAndTheEngineTellsWhatIsMissing) {
  // A PNG whose header says 50,000 x 50,000 (and nothing more): refused from its 45 bytes.
  const unsigned char header[] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
                                  0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0xc3, 0x50, 0x00, 0x00, 0xc3, 0x50,
                                  0x08, 0x00, 0x00, 0x00, 0x00, 0x6e, 0xc4, 0x62, 0x16, 0x00, 0x00, 0x00,
                                  0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  auto huge = load_document_bytes(std::string(reinterpret_cast<const char*>(header), sizeof header), "png");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("50000 x 50000 pixels, over max_image_pixels"), std::string::npos)
      << huge.error().message;

  LoadLimits limits;
  limits.ocr_page_seconds = 0.001;
  auto slow = load_document_bytes(encode_image(page_one_, IFF_PNG), "png", limits);
  ASSERT_FALSE(slow);
  EXPECT_NE(slow.error().message.find("ocr_page_seconds"), std::string::npos) << slow.error().message;

  limits = {};
  limits.ocr_languages = "eng+xyz";
  auto missing = load_document_bytes(encode_image(page_one_, IFF_PNG), "png", limits);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'eng+xyz' are not all installed"), std::string::npos)
      << missing.error().message;

  auto garbage = load_document_bytes("not an image at all", "png");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, ErrorCode::corrupt);
  for (const char* tiny : {"", "\x89PNG", "II*\0"}) {  // shorter than the magic Leptonica looks at
    auto cut = load_document_bytes(tiny, "png");
    ASSERT_FALSE(cut);
    EXPECT_EQ(cut.error().code, ErrorCode::corrupt);
  }
  // Leptonica's other formats are not read, whatever the name says (it decodes a GIF whole to learn
  // its size).
  PixPtr small(pixScale(page_one_, 0.1f, 0.1f));
  for (const int other : {IFF_GIF, IFF_BMP, IFF_PNM}) {
    auto refused = load_document_bytes(encode_image(small.get(), other), "png");
    ASSERT_FALSE(refused) << other;
    EXPECT_NE(refused.error().message.find("not a PNG, JPEG, TIFF or WebP"), std::string::npos)
        << refused.error().message;
  }

  const OcrInfo info = ocr_info();
  EXPECT_TRUE(info.version.starts_with("5.")) << info.version;
  EXPECT_NE(std::find(info.languages.begin(), info.languages.end(), "eng"), info.languages.end());
}

TEST_F(OcrTest, ABlankScannedPageCountsAsRead) {
  PixPtr blank(pixCreate(2480, 3508, 8));  // A4 at 300 dpi, white
  pixSetAllArbitrary(blank.get(), 255);
  const std::string scan = scanned_pdf({blank.get()}, 300);
  ASSERT_FALSE(scan.empty());
  LoadLimits limits;
  const Told told = tell_into(limits);
  auto doc = load_document_bytes(scan, "pdf", limits);
  ASSERT_FALSE(doc);  // nothing to read on it
  EXPECT_NE(doc.error().message.find("no text"), std::string::npos) << doc.error().message;
  EXPECT_EQ(*told, (Progress{{0, 1}, {1, 1}}));
}

TEST_F(OcrTest, EveryPageOfATiff) {
  PixPtr page_two = render_page(*pdf_, 1, 300);
  const fs::path path = fs::temp_directory_path() / ("kotae-ocr-" + std::to_string(::getpid()) + ".tiff");
  ASSERT_EQ(pixWriteTiff(path.c_str(), page_one_, IFF_TIFF_ZIP, "w"), 0);
  ASSERT_EQ(pixWriteTiff(path.c_str(), page_two.get(), IFF_TIFF_ZIP, "a"), 0);
  LoadLimits limits;
  const Told told = tell_into(limits);
  auto doc = load_document(path, limits);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "tiff");
  EXPECT_EQ(doc->pages, 2u);
  EXPECT_EQ(*told, (Progress{{0, 2}, {1, 2}, {2, 2}}));
  // Its pages are counted from their headers before any is read: one too many is refused at once.
  limits.max_ocr_pages = 1;
  told->clear();
  auto over = load_document(path, limits);
  fs::remove(path);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("max_ocr_pages (1)"), std::string::npos) << over.error().message;
  EXPECT_TRUE(told->empty());
  EXPECT_GE(word_recall(page_text(*born_digital_, 2), page_text(*doc, 2)), 0.97) << page_text(*doc, 2);
}

}  // namespace
}  // namespace kotae::text
