#pragma once
// The Document contract of text/document.h, checked on every document a loader fuzz target gets back:
// a loader that returns a document breaking it is a bug even when nothing crashed. The same checks as
// the loader tests' expect_document_invariants, aborting so libFuzzer keeps the input.

#include <string_view>

#include "core/assert.h"
#include "text/document.h"
#include "text/loaders/utf8_text.h"

namespace kotae::fuzz {

inline void check_document_contract(const text::Document& doc) {
  const std::string_view text = doc.text;
  KOTAE_ASSERT(!text.empty());
  KOTAE_ASSERT(text::is_valid_utf8(text));
  KOTAE_ASSERT(text::is_valid_utf8(doc.title));
  KOTAE_ASSERT(text.find("\n\n\n") == std::string_view::npos);
  KOTAE_ASSERT(text.find("  ") == std::string_view::npos);
  KOTAE_ASSERT(text.find(" \n") == std::string_view::npos);
  KOTAE_ASSERT(text.find("\n ") == std::string_view::npos);
  KOTAE_ASSERT(text.find('\r') == std::string_view::npos);
  KOTAE_ASSERT(text.find('\t') == std::string_view::npos);
  KOTAE_ASSERT(!doc.segments.empty());
  KOTAE_ASSERT(doc.segments.front().begin == 0);
  KOTAE_ASSERT(doc.segments.back().end == text.size());
  for (std::size_t i = 0; i < doc.segments.size(); ++i) {
    const auto& s = doc.segments[i];
    KOTAE_ASSERT(s.begin < s.end && s.end <= text.size());
    const auto block = text.substr(s.begin, s.end - s.begin);
    KOTAE_ASSERT(block.find("\n\n") == std::string_view::npos);
    KOTAE_ASSERT(text::is_valid_utf8(block));
    if (s.in_table()) {  // a row of a Markdown table: one line, the header's with its "| --- |" line
      KOTAE_ASSERT(block.starts_with("| ") && block.ends_with(" |") && !s.table.empty());
      const bool header = s.begin == s.table_begin;
      KOTAE_ASSERT((block.find('\n') != std::string_view::npos) == header);
      KOTAE_ASSERT(header ? s.header_end == s.end
                          : i > 0 && doc.segments[i - 1].table_begin == s.table_begin &&
                                doc.segments[i - 1].header_end == s.header_end);
    }
    if (i + 1 < doc.segments.size()) {  // ordered, and separated by the blank line, or a table's rows by a line break
      const auto& next = doc.segments[i + 1];
      const bool rows = s.in_table() && next.in_table() && next.table_begin == s.table_begin;
      KOTAE_ASSERT(next.begin == s.end + (rows ? 1 : 2));
      KOTAE_ASSERT(text.substr(s.end, rows ? 1 : 2) == (rows ? "\n" : "\n\n"));
    }
    KOTAE_ASSERT(doc.pages > 0 ? s.page >= 1 && s.page <= doc.pages : s.page == 0);
  }
}

}  // namespace kotae::fuzz
