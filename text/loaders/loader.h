#pragma once
// Loads a file into a Document (text/document.h): plain text, Markdown, HTML, PDF, DOCX, PPTX, ODT,
// EPUB, XLSX, ODS, CSV, TSV, EML or MBOX, chosen by the file's extension. Every failure is a per-file Error that names
// the file and the reason (corrupt, encrypted, empty, unsupported, too large); nothing here throws or aborts on bad
// input.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/stop_when.h"
#include "text/document.h"

namespace kotae::text {

// Limits against hostile or broken files; exceeding one is an invalid_argument error naming it.
struct LoadLimits {
  std::uint64_t max_file_bytes = 256ull << 20;  // size on disk
  std::uint32_t max_pages = 10000;              // PDF pages, PPTX slides, EPUB chapters, XLSX sheets, MBOX messages
  // DOCX, PPTX, ODT, EPUB, XLSX, ODS: bytes inflated from the zip (bombs)
  std::uint64_t max_decompressed_bytes = 512ull << 20;
  std::uint32_t max_depth = 256;               // HTML and XML element nesting, MIME multiparts
  std::uint64_t max_text_bytes = 64ull << 20;  // extracted text
  std::uint32_t max_mail_depth = 4;            // EML, MBOX: a message in a message (forwarded, attached) in...
  // OCR (text/loaders/ocr.h): scanned PDF pages and PNG, JPEG, TIFF and WebP images.
  std::string ocr_languages = "eng";             // Tesseract's, joined by '+'; "" reads no image and OCRs no page
  std::uint32_t max_ocr_pages = 1000;            // pages of one file that need OCR
  double ocr_page_seconds = 60;                  // Tesseract's time for one page
  std::uint32_t ocr_threads = 1;                 // pages of one file OCR'd at once
  std::uint64_t max_image_pixels = 200'000'000;  // width x height of an image or rendered page, checked before decoding
  // Told how the file's OCR goes: once with 0 when the pages to OCR are known (a scanned PDF's pages
  // without a usable text layer, an image's one page, a TIFF's pages), then after each page is read (a
  // blank page counts as read). Called from the loading thread and from the OCR threads (ocr_threads of
  // them), so whatever it touches must be thread-safe; the calls are one at a time, `pages_done` rising
  // by one each. It must be quick (a page's OCR waits for it) and must not throw. An image attached to
  // a mail reports its own pages. Empty: nobody is told.
  std::function<void(std::uint32_t pages_done, std::uint32_t pages_total)> on_ocr_page;
  StopWhen stop;  // asked between pages and blocks: a cancelled job or a spent time budget ends the load
};

// "txt", "md", "html", "pdf", "docx", "pptx", "odt", "epub", "xlsx", "ods", "csv", "tsv", "eml", "mbox" for
// a supported path (by extension, case-insensitive: supported_extensions()), "" otherwise.
std::string document_format(const std::filesystem::path& path);

// The extensions document_format knows, space-separated: ".txt .text ... .tsv .tab".
std::string supported_extensions();

// Reads and converts one file. Empty documents (no text after extraction) are an error.
Result<Document> load_document(const std::filesystem::path& path, const LoadLimits& limits = {});

// The same from bytes already in memory; `format` as document_format returns it.
Result<Document> load_document_bytes(std::string_view bytes, std::string_view format, const LoadLimits& limits = {});

}  // namespace kotae::text
