// Plain text: paragraphs are blocks separated by blank lines; line breaks inside a paragraph are
// kept (plain text is often poems, logs or hand-aligned lists, where lines mean something).

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/utf8_text.h"

namespace kotae::text {

Result<Document> load_plain_text(std::string_view bytes, const LoadLimits& limits) {
  // Files that are not UTF-8 are read as Latin-1: a fallback, so a legacy file still loads.
  const std::string text = decode_text_bytes(bytes);
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  builder.add_paragraph(text);
  return std::move(builder).finish("txt", "", 0);
}

}  // namespace kotae::text
