#pragma once
// Citations: what an answer's [n] markers point at. Each becomes the source's chunk, and within it
// the sentence that shares the most words with the answer's sentence carrying the marker (the whole
// chunk when none does), as exact bytes of the document, so a UI can highlight them. Markers naming
// no source in the prompt are removed from the answer.

#include <cstddef>
#include <cstdint>
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
  std::uint32_t page = 0;                        // the chunk's first page; 0 when the document has none
  std::uint32_t page_last = 0;                   // the chunk's last: the cited words are on one of these
  std::size_t start = 0, end = 0;                // bytes of the document's text
  std::string text;                              // exactly those bytes
  std::size_t answer_start = 0, answer_end = 0;  // the "[n]" marker's bytes in the answer
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

// The citation of bytes [begin, end) of a source's chunk text.
Citation cite(const Source& source, std::size_t begin, std::size_t end);

// A text's sentences as byte spans (ends of sentences and line breaks), without surrounding spaces.
std::vector<std::pair<std::size_t, std::size_t>> split_sentences(std::string_view text);

}  // namespace kotae::rag
