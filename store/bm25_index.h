#pragma once
// BM25 over the chunks, in memory, for Collection::search_bm25: FTS5 scores every chunk that
// matches any query word (~3 µs each, so 144 ms at 100k chunks for a query with "debian" in it),
// while a term-at-a-time pass over flat posting arrays costs a few nanoseconds per posting. Terms
// are those of the chunks_fts table (unicode61, remove_diacritics 2, then Porter), so both agree on
// what matches. Scores are BM25 with k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5))
// (always positive, unlike FTS5's), and FTS5's column weights: tf = tf_text + 0.5 tf_heading, and
// the length is the tokens of both columns.
//
// Not synchronised: the caller holds a shared lock around search and an exclusive one around
// add and remove (search keeps its scratch space per thread, so concurrent searches are safe).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kotae::store {

struct Bm25Hit {
  std::int64_t chunk_id = 0;
  std::int64_t document_id = 0;
  float score = 0;  // higher is better
};

class Bm25Index {
 public:
  // Whether a chunk of this document may be returned.
  using DocumentPredicate = std::function<bool(std::int64_t document_id)>;

  // The terms of `text` as chunks_fts indexes them, in order, repeats kept.
  static std::vector<std::string> terms(std::string_view text);
  // The distinct terms of a free-text query (at most 64), English stop words left out unless the
  // query has nothing else ("to be or not to be").
  static std::vector<std::string> query_terms(std::string_view query);

  // `heading_text` is indexed as it is given (the collection passes the stored JSON, as FTS5 does).
  // Adding a chunk id already present replaces it.
  void add(std::int64_t chunk_id, std::int64_t document_id, std::string_view text, std::string_view heading_text);
  // false when the chunk is not there.
  bool remove(std::int64_t chunk_id);
  std::size_t size() const { return slot_of_chunk_.size(); }

  // The best k chunks containing any of `terms`, best first (ties: lower chunk id first).
  std::vector<Bm25Hit> search(std::span<const std::string> terms, std::size_t k,
                              const DocumentPredicate* allow = nullptr) const;

 private:
  struct Posting {
    std::uint32_t slot;
    float frequency;  // tf_text + 0.5 tf_heading
  };
  struct TransparentHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  std::uint32_t term_id(std::string_view term);
  // The term of a word as unicode61 folds it (stemming each occurrence was most of add()'s time).
  std::uint32_t word_term_id(const std::string& word);
  void compact();

  std::unordered_map<std::string, std::uint32_t, TransparentHash, std::equal_to<>> term_ids_;
  // word → term, open addressing over an arena of the words: a node-based map's lookups were a
  // third of building the index.
  struct WordEntry {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    std::uint32_t term = UINT32_MAX;  // UINT32_MAX: empty
  };
  std::vector<WordEntry> word_table_ = std::vector<WordEntry>(1024);
  std::size_t word_count_ = 0;
  std::string word_arena_;
  std::vector<std::vector<Posting>> postings_;  // by term id, slots ascending
  // By slot: a chunk's place in the posting lists. Removal clears `live_`; compact() renumbers.
  std::vector<std::int64_t> slot_chunk_;
  std::vector<std::int64_t> slot_document_;
  std::vector<float> slot_length_;
  std::vector<std::uint8_t> live_;
  std::unordered_map<std::int64_t, std::uint32_t> slot_of_chunk_;
  std::size_t dead_slots_ = 0;
  double total_length_ = 0;  // of live chunks
};

}  // namespace kotae::store
