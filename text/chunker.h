#pragma once
// Token-aware chunking: cuts a Document into chunks of at most `max_tokens` tokens of the embedder's
// tokenizer (special tokens not counted), each overlapping the previous one by about
// `overlap_tokens`. Cuts fall on paragraph breaks where possible, then sentence ends, then between
// words; never inside a word; never inside a table's row unless the row alone is over max_tokens, and
// a piece of a table repeats the table's header. Deterministic: the same text and options give the same chunks.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "text/document.h"
#include "text/tokenizer.h"

namespace kotae::text {

struct ChunkerOptions {
  std::size_t max_tokens = 256;     // per chunk, without [CLS]/[SEP]
  std::size_t overlap_tokens = 32;  // shared with the previous chunk; must be < max_tokens / 2
};

struct Chunk {
  std::size_t begin = 0;  // byte span in Document::text; text.substr(begin, end - begin) is the chunk
  std::size_t end = 0;
  std::uint32_t page_first = 0;  // pages the span touches (0 when the document has none)
  std::uint32_t page_last = 0;
  std::vector<std::string> heading_path;  // the heading path where the chunk starts
  std::size_t token_count = 0;            // tokens in chunk_text(), by the tokenizer
  // A chunk that starts among a table's rows repeats the table's header first: text[header_begin,
  // header_end) (header_begin == header_end when it does not).
  std::size_t header_begin = 0, header_end = 0;
  std::string table;                          // the first table the chunk touches ("" when none),
  std::uint32_t row_first = 0, row_last = 0;  // and the rows of it the chunk holds (the header's only
                                              // when it holds no other)
  std::vector<TextBox> boxes;                 // the document's OCR'd lines the span touches
};

// The chunk's text as it is indexed and shown: the repeated table header, a line break, then its span.
std::string chunk_text(const Document& document, const Chunk& chunk);

// Fails (invalid_argument) only on unusable options.
Result<std::vector<Chunk>> chunk_document(const Document& document, const Tokenizer& tokenizer,
                                          const ChunkerOptions& options = {});

}  // namespace kotae::text
