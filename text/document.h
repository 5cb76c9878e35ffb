#pragma once
// A loaded document: its normalised text and, for every byte of it, the page and heading path it
// came from. Loaders produce it; the chunker and the store read it. Offsets are UTF-8 byte offsets
// into `text` (the tokenizer's offsets are too), so a chunk's span is text.substr(begin, end - begin).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kotae::text {

// A stretch of the text with one page and one heading path.
struct TextSegment {
  std::size_t begin = 0;  // byte offsets into Document::text, begin < end
  std::size_t end = 0;
  std::uint32_t page = 0;                 // 1-based page; 0 where the format has no pages
  std::vector<std::string> heading_path;  // enclosing headings, outermost first; a heading's own
                                          // text is inside its path
  // A row of a Markdown table (DocumentBuilder::add_table): one segment per row, the header's with its
  // "| --- |" line. Rows are separated by "\n", not "\n\n", and no chunk cuts one.
  std::string table;      // the table's name: a sheet's, else "Table N" (N counts the document's tables)
  std::uint32_t row = 0;  // the row's number in its source: a sheet's row, else 1 for the header; 0 outside tables
  std::size_t table_begin = 0;  // the table's header is text[table_begin, header_end): what a piece of
  std::size_t header_end = 0;   // the table repeats before its rows
  // A running header, footer or page number of a PDF (text/loaders/pdf_layout.h): kept in the text,
  // after the body, with its page, but in no chunk.
  bool furniture = false;
  bool in_table() const { return row != 0; }
};

// Where a line of OCR'd text is on its page (text/loaders/ocr.h): fractions of the page's width and
// height from its top-left corner.
struct TextBox {
  std::size_t begin = 0, end = 0;  // the line's bytes in Document::text
  std::uint32_t page = 0;          // 1-based, as segments (an image is page 1)
  float left = 0, top = 0, right = 0, bottom = 0;
};

// Normalised text: valid UTF-8, "\n" line ends, paragraphs (and headings, list items, table rows)
// separated by exactly one blank line "\n\n", runs of spaces collapsed, no leading or trailing
// whitespace; a table is one block of Markdown lines, one segment per row. Segments are ordered,
// non-overlapping and cover the text except the separators between blocks and between a table's rows.
struct Document {
  std::string text;
  std::string title;        // <title>, the first heading, the PDF's Title, or "" (callers fall back to the file name)
  std::string format;       // "txt", "md", "html", "pdf", "docx", "pptx", "odt", "epub", "xlsx", "ods", "csv", "tsv",
                            // "eml", "mbox"
  std::uint32_t pages = 0;  // PDF pages, PPTX slides (a slide is a page); 0 for formats without pages
  std::vector<TextSegment> segments;
  bool pages_are_units = false;  // PPTX: a slide is a unit of its own, and no chunk spans two
  // What the file says of itself besides its text, kept with the document's metadata (the caller's
  // keys win; text/document_metadata.h): "title", "author", "created", "modified" (ISO 8601) from a
  // PDF's Info dictionary, an office file's docProps/core.xml or meta.xml, an e-mail's Subject, From
  // and Date; an e-mail's "from", "to", "cc", "date", "subject", "message_id" too. Each value one line
  // of at most 1 KiB (load_document_bytes cleans them).
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<TextBox> boxes;  // OCR'd lines, in text order; none for a born-digital document
};

}  // namespace kotae::text
