#pragma once
// A retrieved chunk as an answer uses it: numbered for the prompt and for citations. Numbers are
// given per conversation, so a source keeps its number in every later turn that still shows it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "text/document.h"

namespace kotae::rag {

struct Source {
  int number = 0;  // [n] in the prompt and the answer; 1-based
  std::int64_t chunk_id = 0;
  std::int64_t document_id = 0;
  std::string document;  // the document's path (or name) in the collection
  std::string title;
  std::string format;                           // "pdf", "html", ...: how a viewer shows the document
  std::string metadata_json = "{}";             // the document's metadata as stored (a JSON object's text)
  std::uint32_t page_first = 0, page_last = 0;  // 0: the document has no pages
  std::size_t begin = 0, end = 0;               // the chunk's bytes in the document's text
  std::vector<std::string> heading_path;
  std::string table;                          // the table or sheet whose rows the chunk holds, "" when none
  std::uint32_t row_first = 0, row_last = 0;  // and which rows (store::ChunkRecord)
  std::vector<text::TextBox> boxes;           // the OCR'd lines the chunk touches
  std::string text;      // a table's piece starts with the table's header (store::ChunkRecord::repeated_bytes)
  double relevance = 0;  // cosine similarity of the chunk's vector and the question's
  double score = 0;      // the retriever's ranking score (fused, or the reranker's)
};

// Where in its document a source is, for people and for the prompt: ", page 3", ", pages 3-4",
// ", slide 2" (a PPTX's pages are its slides), then the table's rows: ", sheet Prices, rows 2-9",
// ", Table 1, row 4"; "" for a document without pages or tables.
inline std::string place_of(const Source& s) {
  std::string place;
  if (s.page_first != 0) {
    const std::string unit = s.format == "pptx" ? "slide" : "page";
    if (s.page_last <= s.page_first) {
      place = ", " + unit + " " + std::to_string(s.page_first);
    } else {
      place = ", " + unit + "s " + std::to_string(s.page_first) + "-" + std::to_string(s.page_last);
    }
  }
  if (!s.table.empty()) {
    place += (s.format == "xlsx" || s.format == "ods") ? ", sheet " : ", ";
    place += s.table;
    if (s.row_last <= s.row_first) {
      place += ", row " + std::to_string(s.row_first);
    } else {
      place += ", rows " + std::to_string(s.row_first) + "-" + std::to_string(s.row_last);
    }
  }
  return place;
}

// A question and answer of a conversation, with the sources first shown in that turn.
struct Turn {
  std::string question;
  std::string answer;
  std::vector<Source> sources;
};

// What a follow-up question builds on. The caller keeps it (the CLI for one question, the server per
// conversation id); ask() appends each answered turn.
struct Conversation {
  std::vector<Turn> turns;

  int next_source_number() const {
    int n = 0;
    for (const auto& t : turns) {
      for (const auto& s : t.sources) n = std::max(n, s.number);
    }
    return n + 1;
  }
};

}  // namespace kotae::rag
