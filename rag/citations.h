#pragma once
// Citations: what an answer's [n] markers point at. Each becomes the source's chunk, and within it
// the sentence that shares the most words with the answer's sentence carrying the marker (the whole
// chunk when none does), as exact bytes of the document, so a UI can highlight them. Markers naming
// no source in the prompt are removed from the answer.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rag/source.h"

namespace kotae::rag {

struct Citation {
  int number = 0;
  std::int64_t chunk_id = 0;
  std::int64_t document_id = 0;
  std::string document;
  std::string title;
  std::string format;
  std::string metadata_json = "{}";              // the document's metadata as stored (Source::metadata_json)
  std::uint32_t page = 0;                        // the chunk's first page; 0 when the document has none
  std::uint32_t page_last = 0;                   // the chunk's last: the cited words are on one of these
  std::size_t start = 0, end = 0;                // bytes of the document's text
  std::string text;                              // exactly those bytes
  std::string table_header;                      // for a cited table row (the whole row is cited), its
                                                 // table's header lines "| a | b |\n| --- | --- |"; else ""
  std::size_t answer_start = 0, answer_end = 0;  // the "[n]" marker's bytes in the answer
  std::vector<text::TextBox> boxes;              // of OCR'd text: the lines the cited bytes are on
};

struct CitedAnswer {
  std::string text;  // markers normalised to [n][m]; unknown ones removed
  std::vector<Citation> citations;
  std::size_t removed_markers = 0;
};

// "[n]", as prompts show sources and answers cite them.
std::string citation_marker(int number);

// Understands [1], [1][2], [1, 2] and [1,2].
CitedAnswer resolve_citations(std::string_view answer, std::span<const Source> sources);

// The citation of bytes [begin, end) of a source's chunk text; bytes inside a table's row cite the
// whole row, with the table's header.
Citation cite(const Source& source, std::size_t begin, std::size_t end);

// A data row of a Markdown table (text::DocumentBuilder::add_table) in a text: the row's line
// [begin, end) and the table's header lines [header_begin, header_end).
struct TableRow {
  std::size_t begin = 0, end = 0;
  std::size_t header_begin = 0, header_end = 0;
};

// The table data row whose line holds byte `at`; none outside tables and on a header's lines.
std::optional<TableRow> table_row_at(std::string_view text, std::size_t at);

// A text's sentences as byte spans (ends of sentences and line breaks), without surrounding spaces.
std::vector<std::pair<std::size_t, std::size_t>> split_sentences(std::string_view text);

}  // namespace kotae::rag
