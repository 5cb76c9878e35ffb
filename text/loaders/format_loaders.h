#pragma once
// The per-format loaders behind load_document_bytes (loader.h), one file each. They take the whole
// file in memory and return errors that give the reason only; load_document adds the file's path.

#include <string>
#include <string_view>

#include "core/result.h"
#include "text/document.h"
#include "text/loaders/loader.h"

namespace kotae::text {

Result<Document> load_plain_text(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_markdown(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_html(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_pdf(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_docx(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_pptx(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_odt(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_epub(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_xlsx(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_ods(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_csv(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_tsv(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_eml(std::string_view bytes, const LoadLimits& limits);
Result<Document> load_mbox(std::string_view bytes, const LoadLimits& limits);
// PNG, JPEG, TIFF and WebP by OCR; `format` is the document's: "png", "jpg", "tiff", "webp".
Result<Document> load_image(std::string_view bytes, const LoadLimits& limits, const std::string& format);

}  // namespace kotae::text
