#include "text/chunker.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/assert.h"
#include "text/text_boundaries.h"

// How it works: the whole document is tokenised once; a chunk is a run of tokens [start, end), its
// byte span runs from the first token's begin to the last token's end, so it never starts or ends
// with whitespace. Every gap between two tokens gets a Boundary (text_boundaries.h) and each chunk
// ends at the strongest boundary within max_tokens. Because BERT's pre-tokeniser treats whitespace,
// punctuation and CJK characters alike wherever they are, re-tokenising a span cut at such a
// boundary gives exactly the tokens counted here.
//
// Where a chunk ends, among the tokens that fit:
//   0. at a unit's end, however short the chunk (Document::pages_are_units: a chunk is on one slide),
//      or before a PDF's running lines (TextSegment::furniture), which no chunk holds: the next chunk
//      starts after them;
//   1. at the first heading change once the chunk is at least half full (a new section, a new chunk);
//   2. else at the last paragraph break, then sentence end, then line break, that leaves the chunk at
//      least half full (as many whole paragraphs as fit; a long paragraph is cut at sentences, and a
//      short paragraph followed by a long one shares a chunk with the long one's first sentences);
//   3. else, where that would cut a table's row, at the last break between rows however short the
//      chunk (rows are paragraphs; inside a row there is no stronger boundary than a word);
//   4. else at the last word boundary (unless that leaves the chunk under half full before a word
//      that is longer than max_tokens anyway);
//   5. else inside a word longer than max_tokens (a URL, a base64 blob): beside punctuation if it has
//      any, else between word pieces. Only such a word is ever cut. A chunk that starts or ends
//      between word pieces is counted by re-tokenising its text (a cut-off piece tokenises
//      differently alone) and shortened until it fits. Never between the tokens of one character
//      (Boundary::inside_character): no byte offset lies there.
//
// Overlap: after a cut inside a paragraph, the next chunk starts at most overlap_tokens tokens
// before the cut, at the first sentence start in that window, else the first line start, else the
// first word start (else, inside a long word, the first place one may cut); never so far back that
// the next chunk could not hold the whole word after the cut. After a cut at a paragraph break the
// next chunk starts right there: the break is a natural edge, and repeating the previous paragraph's
// tail would only blur which chunk answers a question.
//
// Tables: a chunk that starts among a table's rows repeats the table's header (its first line and
// the "| --- |" line) before its span, and counts its tokens, so every piece of a long table reads as
// a table; a header over half of max_tokens is not repeated.

namespace kotae::text {
namespace {

using TokenIndex = std::size_t;

// Finds segments by byte offset; they are ordered and do not overlap.
class SegmentIndex {
 public:
  explicit SegmentIndex(const std::vector<TextSegment>& segments) : segments_(segments) {}

  // The first segment ending after `offset`: the one holding it or, in a separator, the next one.
  std::size_t first_after(std::size_t offset) const {
    const auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                                     [](std::size_t o, const TextSegment& s) { return o < s.end; });
    return static_cast<std::size_t>(it - segments_.begin());
  }
  std::size_t size() const { return segments_.size(); }
  const TextSegment& operator[](std::size_t i) const { return segments_[i]; }

 private:
  const std::vector<TextSegment>& segments_;
};

// Turns the paragraph breaks where the heading path changes into section boundaries, and where the
// page changes into unit boundaries when `pages_are_units`. In a table, a break between two rows
// becomes a paragraph boundary and every gap inside a row (the header with its "| --- |" line) at most
// a word boundary, marked in `inside_row`.
void mark_segment_changes(const Encoding& tokens, const SegmentIndex& segments, bool pages_are_units,
                          std::vector<Boundary>& boundaries, std::vector<bool>& inside_row) {
  inside_row.assign(boundaries.size(), false);
  if (segments.size() == 0) return;
  std::size_t cursor = 0;  // offsets only grow, so one forward walk finds every token's segment
  const auto segment_at = [&](std::size_t offset) {
    while (cursor < segments.size() && segments[cursor].end <= offset) ++cursor;
    return cursor;
  };
  for (TokenIndex j = 1; j + 1 < boundaries.size(); ++j) {
    const std::size_t before = segment_at(tokens.offsets[j - 1].first);
    const std::size_t after = segment_at(tokens.offsets[j].first);
    if (after >= segments.size()) return;  // text past the last segment: no headings to compare
    if (segments[after].furniture && !segments[before].furniture) {
      boundaries[j] = Boundary::unit;  // a chunk ends where running lines begin
      continue;
    }
    if (segments[after].in_table() && segments[before].table_begin == segments[after].table_begin &&
        segments[before].in_table()) {
      if (before == after || segments[before].begin == segments[before].table_begin) {
        boundaries[j] = std::min(boundaries[j], Boundary::word);
        inside_row[j] = true;
      } else {
        boundaries[j] = Boundary::paragraph;
      }
      continue;
    }
    if (boundaries[j] != Boundary::paragraph || before == after) continue;
    if (pages_are_units && segments[before].page != segments[after].page) {
      boundaries[j] = Boundary::unit;
    } else if (segments[before].heading_path != segments[after].heading_path) {
      boundaries[j] = Boundary::section;
    }
  }
}

constexpr std::size_t kBoundaryKinds = static_cast<std::size_t>(Boundary::unit) + 1;
std::size_t rank(Boundary b) {
  return static_cast<std::size_t>(b);
}

// Chooses where chunks end and where the next ones start, in token indices.
class ChunkPlanner {
 public:
  ChunkPlanner(const std::vector<Boundary>& boundaries, const std::vector<bool>& inside_row,
               const ChunkerOptions& options)
      : boundaries_(boundaries), inside_row_(inside_row), options_(options), token_count_(boundaries.size() - 1) {}

  // Where the chunk that starts at `start` ends: past `floor` (the previous chunk's end), within
  // `budget` tokens (max_tokens, less a repeated table header's).
  TokenIndex choose_end(TokenIndex start, TokenIndex floor, std::size_t budget) const {
    const TokenIndex limit = std::min(token_count_, start + budget);
    const TokenIndex lowest = std::max(start, floor) + 1;
    KOTAE_ASSERT(lowest <= limit);  // holds because overlap_tokens < max_tokens / 2 and a header repeats
                                    // only when it takes at most half of them
    for (TokenIndex j = lowest; j <= limit; ++j) {
      if (boundaries_[j] == Boundary::unit) return j;
    }
    const TokenIndex half_full = std::max(lowest, start + (budget + 1) / 2);
    for (TokenIndex j = half_full; j <= limit; ++j) {
      if (boundaries_[j] == Boundary::section) return j;  // a heading change, or the text's end
    }
    if (limit == token_count_) return limit;  // the rest fits
    // furthest[k]: the last place in [lowest, limit] whose boundary is at least of kind k (0 if none).
    std::array<TokenIndex, kBoundaryKinds> furthest{};
    for (TokenIndex j = limit; j >= lowest; --j) {
      TokenIndex& slot = furthest[rank(boundaries_[j])];
      if (slot == 0) slot = j;
    }
    for (std::size_t k = kBoundaryKinds - 1; k-- > 0;) furthest[k] = std::max(furthest[k], furthest[k + 1]);
    for (Boundary b : {Boundary::paragraph, Boundary::sentence, Boundary::line}) {
      if (furthest[rank(b)] >= half_full) return furthest[rank(b)];
    }
    const TokenIndex word_cut = furthest[rank(Boundary::word)];
    // Rather a short chunk than a table row cut in two, when a whole row fits.
    if (inside_row_[word_cut] && furthest[rank(Boundary::paragraph)] != 0) return furthest[rank(Boundary::paragraph)];
    if (word_cut != 0 && (word_cut >= half_full || !starts_long_word(word_cut, limit))) return word_cut;
    // The word running past `limit` is longer than max_tokens and will be cut wherever we cut it:
    // cut it here, beside punctuation if possible, rather than leave this chunk short.
    const TokenIndex piece_cut = furthest[rank(Boundary::pre_token)];
    if (piece_cut > word_cut) return piece_cut;
    // Between word pieces: at `limit`, or just before it where `limit` falls inside a character.
    if (const TokenIndex cut = furthest[rank(Boundary::word_piece)]; cut != 0) return cut;
    // Only a max_tokens below one character's tokens gets here: that character is not split.
    TokenIndex past = limit + 1;
    while (boundaries_[past] == Boundary::inside_character) ++past;
    return past;
  }

  // Where the chunk after [start, end) starts: see the overlap rule at the top of this file.
  TokenIndex next_start(TokenIndex start, TokenIndex end) const {
    const Boundary cut = boundaries_[end];
    if (options_.overlap_tokens == 0 || cut >= Boundary::paragraph) return end;
    TokenIndex window = std::max(start + 1, end > options_.overlap_tokens ? end - options_.overlap_tokens : 0);
    // Leave the next chunk room for the whole word after the cut: it must end past `end`, and
    // should not have to do so inside a word that would fit.
    const TokenIndex longest_end = std::min(token_count_, end + options_.max_tokens);
    for (TokenIndex j = end + 1; j <= longest_end; ++j) {
      if (boundaries_[j] >= Boundary::word) {
        window = std::max(window, j - std::min(j, options_.max_tokens));
        break;
      }
    }
    for (Boundary wanted :
         {Boundary::sentence, Boundary::line, Boundary::word, Boundary::pre_token, Boundary::word_piece}) {
      if (wanted < Boundary::word && wanted < cut) break;  // start inside a word only when the cut was
      for (TokenIndex k = window; k < end; ++k) {
        if (boundaries_[k] >= wanted) return k;
      }
    }
    return end;
  }

 private:
  // Whether the word that starts at `word_start` and runs past `limit` has more than max_tokens tokens.
  bool starts_long_word(TokenIndex word_start, TokenIndex limit) const {
    const TokenIndex longest_end = std::min(token_count_, word_start + options_.max_tokens);
    for (TokenIndex j = limit + 1; j <= longest_end; ++j) {
      if (boundaries_[j] >= Boundary::word) return false;
    }
    return true;
  }

  const std::vector<Boundary>& boundaries_;
  const std::vector<bool>& inside_row_;
  const ChunkerOptions& options_;
  const TokenIndex token_count_;
};

Chunk make_chunk(std::size_t begin, std::size_t end, std::size_t token_count, const SegmentIndex& segments) {
  Chunk chunk;
  chunk.begin = begin;
  chunk.end = end;
  chunk.token_count = token_count;
  const std::size_t first = segments.first_after(begin);
  if (first == segments.size()) return chunk;
  chunk.heading_path = segments[first].heading_path;
  chunk.page_first = chunk.page_last = segments[first].page;
  std::size_t table_begin = 0;  // the first table the chunk touches
  bool data_rows = false;
  for (std::size_t s = first; s < segments.size() && segments[s].begin < end; ++s) {
    const TextSegment& segment = segments[s];
    chunk.page_first = std::min(chunk.page_first, segment.page);
    chunk.page_last = std::max(chunk.page_last, segment.page);
    if (!segment.in_table()) continue;
    if (chunk.table.empty()) {
      table_begin = segment.table_begin;
      chunk.table = segment.table;
      chunk.row_first = chunk.row_last = segment.row;
    }
    if (segment.table_begin != table_begin || segment.begin == segment.table_begin)
      continue;  // another table, the header
    if (!data_rows) chunk.row_first = segment.row;
    data_rows = true;
    chunk.row_last = segment.row;
  }
  return chunk;
}

// The OCR'd lines (in text order) that bytes [begin, end) touch.
std::vector<TextBox> boxes_within(const std::vector<TextBox>& boxes, std::size_t begin, std::size_t end) {
  auto it = std::lower_bound(boxes.begin(), boxes.end(), begin,
                             [](const TextBox& box, std::size_t offset) { return box.end <= offset; });
  std::vector<TextBox> out;
  for (; it != boxes.end() && it->begin < end; ++it) out.push_back(*it);
  return out;
}

// The first token at or after byte `offset`.
TokenIndex token_at(const Encoding& tokens, std::size_t offset) {
  const auto it = std::lower_bound(tokens.offsets.begin(), tokens.offsets.end(), offset,
                                   [](const auto& span, std::size_t o) { return span.first < o; });
  return static_cast<TokenIndex>(it - tokens.offsets.begin());
}

}  // namespace

Result<std::vector<Chunk>> chunk_document(const Document& document, const Tokenizer& tokenizer,
                                          const ChunkerOptions& options) {
  if (options.max_tokens == 0) return make_error(ErrorCode::invalid_argument, "chunker: max_tokens must be positive");
  if (options.overlap_tokens != 0 && 2 * options.overlap_tokens >= options.max_tokens) {
    return make_error(ErrorCode::invalid_argument,
                      "chunker: overlap_tokens (" + std::to_string(options.overlap_tokens) +
                          ") must be less than half of max_tokens (" + std::to_string(options.max_tokens) + ")");
  }
  if (document.text.size() > std::numeric_limits<std::uint32_t>::max()) {
    return make_error(ErrorCode::invalid_argument, "chunker: a document over 4 GiB cannot be chunked");
  }

  const std::string_view text = document.text;
  const Encoding tokens = tokenizer.tokenize(text);
  const TokenIndex n = tokens.size();
  std::vector<Chunk> chunks;
  if (n == 0) return chunks;

  const SegmentIndex segments(document.segments);
  std::vector<Boundary> boundaries = token_boundaries(text, tokens);
  std::vector<bool> inside_row;
  mark_segment_changes(tokens, segments, document.pages_are_units, boundaries, inside_row);
  const ChunkPlanner planner(boundaries, inside_row, options);

  const auto span_begin = [&](TokenIndex t) { return std::size_t{tokens.offsets[t].first}; };
  const auto span_end = [&](TokenIndex t) { return std::size_t{tokens.offsets[t - 1].second}; };
  const auto furniture = [&](TokenIndex t) {
    const std::size_t s = segments.first_after(span_begin(t));
    return s < segments.size() && segments[s].furniture && segments[s].begin <= span_begin(t);
  };
  TokenIndex start = 0, previous_end = 0;
  for (;;) {
    while (start < n && furniture(start)) ++start;
    if (start == n) break;
    // A chunk that starts after a table's header, among its rows, repeats the header first.
    std::size_t header_begin = 0, header_end = 0, header_tokens = 0;
    if (const std::size_t s = segments.first_after(span_begin(start)); s < segments.size()) {
      const TextSegment& segment = segments[s];
      if (segment.in_table() && span_begin(start) >= segment.header_end) {
        const std::size_t count = token_at(tokens, segment.header_end) - token_at(tokens, segment.table_begin);
        if (count <= options.max_tokens / 2) {
          header_begin = segment.table_begin;
          header_end = segment.header_end;
          header_tokens = count;
        }
      }
    }
    TokenIndex end = planner.choose_end(start, previous_end, options.max_tokens - header_tokens);
    std::size_t token_count = end - start;
    if (boundaries[start] == Boundary::word_piece || boundaries[end] == Boundary::word_piece) {
      // Cut between word pieces: the pieces may tokenise differently on their own, so count the text.
      const TokenIndex lowest = std::max(start, previous_end) + 1;
      for (;;) {
        token_count = tokenizer.tokenize(text.substr(span_begin(start), span_end(end) - span_begin(start))).size();
        if (token_count + header_tokens <= options.max_tokens) break;
        TokenIndex shorter = end - 1;  // the next place to cut, never inside a character
        while (shorter >= lowest && boundaries[shorter] == Boundary::inside_character) --shorter;
        if (shorter < lowest) break;
        end = shorter;
      }
    }
    chunks.push_back(make_chunk(span_begin(start), span_end(end), token_count + header_tokens, segments));
    chunks.back().header_begin = header_begin;
    chunks.back().header_end = header_end;
    chunks.back().boxes = boxes_within(document.boxes, chunks.back().begin, chunks.back().end);
    if (end == n) break;
    const TokenIndex next = planner.next_start(start, end);
    previous_end = end;
    start = next;
  }
  return chunks;
}

std::string chunk_text(const Document& document, const Chunk& chunk) {
  const std::string_view text = document.text;
  std::string out;
  if (chunk.header_end > chunk.header_begin) {
    out.append(text.substr(chunk.header_begin, chunk.header_end - chunk.header_begin)).append("\n");
  }
  out.append(text.substr(chunk.begin, chunk.end - chunk.begin));
  return out;
}

}  // namespace kotae::text
