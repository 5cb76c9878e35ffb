// The chunker (text/chunker.h) with the default model's vocabulary, on documents as the loaders give
// them: the input after three option bytes is loaded as Markdown (headings) or plain text, so the
// chunker sees what it sees in production (Markdown's tables among it). Checks the chunker's promises:
// spans inside the text, in order, overlapping only backwards, covering every token, each within
// max_tokens and counted as the tokenizer counts its text (a table's repeated header included).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/assert.h"
#include "fuzz/model_tokenizer.h"
#include "text/chunker.h"
#include "text/loaders/loader.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kotae::fuzz::model_tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  kotae::text::ChunkerOptions options;
  // 4..64: small, so inputs make many chunks, but not below one character's tokens (a Hangul syllable
  // is 3 jamo), which the chunker never splits.
  options.max_tokens = 4 + data[0] % 61;
  options.overlap_tokens = data[1] % ((options.max_tokens - 1) / 2 + 1);  // below half of max_tokens
  const char* format = data[2] & 1 ? "md" : "txt";
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 3, size - 3);
  kotae::text::LoadLimits limits;
  limits.max_text_bytes = 64 << 10;
  const auto doc = kotae::text::load_document_bytes(bytes, format, limits);
  if (!doc) return 0;

  const auto& tokenizer = kotae::fuzz::model_tokenizer();
  const auto chunks = kotae::text::chunk_document(*doc, tokenizer, options);
  KOTAE_ASSERT(chunks);
  const std::string_view text = doc->text;
  const auto tokens = tokenizer.tokenize(text);
  KOTAE_ASSERT(chunks->empty() == (tokens.size() == 0));
  if (chunks->empty()) return 0;
  KOTAE_ASSERT(chunks->front().begin == tokens.offsets.front().first);
  KOTAE_ASSERT(chunks->back().end == tokens.offsets.back().second);
  for (std::size_t i = 0; i < chunks->size(); ++i) {
    const auto& c = (*chunks)[i];
    KOTAE_ASSERT(c.begin < c.end && c.end <= text.size());
    KOTAE_ASSERT(c.token_count >= 1 && c.token_count <= options.max_tokens);
    KOTAE_ASSERT(c.token_count == tokenizer.tokenize(kotae::text::chunk_text(*doc, c)).size());
    // A piece of a table repeats the header of the table it starts in, from before its span.
    KOTAE_ASSERT(c.header_begin <= c.header_end && c.header_end <= c.begin);
    KOTAE_ASSERT(c.row_first <= c.row_last && c.table.empty() == (c.row_first == 0));
    KOTAE_ASSERT(c.page_first <= c.page_last && c.page_last <= doc->pages);
    if (i > 0) {
      const auto& previous = (*chunks)[i - 1];
      KOTAE_ASSERT(previous.begin < c.begin && previous.end < c.end);  // progress
      // Nothing that makes a token is skipped (a gap may hold blanks and characters the normaliser drops,
      // such as U+2066 LEFT-TO-RIGHT ISOLATE).
      KOTAE_ASSERT(c.begin <= previous.end ||
                   tokenizer.tokenize(text.substr(previous.end, c.begin - previous.end)).size() == 0);
    }
  }
  return 0;
}
