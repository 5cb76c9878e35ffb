#include "store/bm25_index.h"

#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/assert.h"
#include "text/porter_stemmer.h"
#include "text/stop_words.h"
#include "text/unicode.h"

namespace kotae::store {
namespace {

constexpr float kK1 = 1.2f;
constexpr float kB = 0.75f;
constexpr float kHeadingWeight = 0.5f;  // FTS5's rank: bm25(1.0, 0.5)
constexpr std::size_t kMaxQueryTerms = 64;
// Posting lists are rewritten without removed chunks once they are this share of the slots.
constexpr double kCompactAbove = 0.25;

bool is_ascii_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// unicode61's token characters outside ASCII: categories L*, N* and Co.
bool is_word_char(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_CO: return true;
    default: return false;
  }
}

// The combining diacritics unicode61 keeps inside a word and folds away (remove_diacritics 2).
bool is_diacritic(char32_t c) {
  return c >= 0x300 && c <= 0x36F && utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_MN;
}

// Lowercase, then a Latin letter with diacritics becomes its ASCII base letter (as unicode61's
// remove_diacritics does); other characters are only lowercased.
void append_folded(std::string& out, char32_t c) {
  if (is_diacritic(c)) return;
  const auto lower = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  utf8proc_int32_t parts[8];
  int last_class = 0;
  const auto n =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(lower), parts, 8, UTF8PROC_DECOMPOSE, &last_class);
  if (n > 1 && parts[0] < 0x80 && is_ascii_word_byte(static_cast<unsigned char>(parts[0]))) {
    bool marks_only = true;
    for (utf8proc_ssize_t i = 1; i < n; ++i) {
      marks_only = marks_only && utf8proc_category(parts[i]) == UTF8PROC_CATEGORY_MN;
    }
    if (marks_only) {
      out.push_back(static_cast<char>(parts[0]));
      return;
    }
  }
  text::append_utf8(out, lower);
}

// Calls on_word(folded word) for each word of `text`, split and folded as unicode61 does.
template <typename OnWord>
void for_each_word(std::string_view text, OnWord&& on_word) {
  std::string word;
  std::size_t pos = 0;
  bool in_word = false;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      ++pos;
      if (is_ascii_word_byte(byte)) {
        word.push_back(static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte));
        in_word = true;
        continue;
      }
    } else {
      const char32_t c = text::decode_utf8(text, pos);
      if (is_word_char(c) || (in_word && is_diacritic(c))) {
        append_folded(word, c);
        in_word = true;
        continue;
      }
    }
    if (in_word && !word.empty()) on_word(word);
    word.clear();
    in_word = false;
  }
  if (in_word && !word.empty()) on_word(word);
}

// Per thread, so that searches under a shared lock do not share it: a score per slot (0 = not yet
// reached; every contribution is positive) and the slots reached.
struct SearchScratch {
  std::vector<float> scores;
  std::vector<std::uint32_t> touched;
};

}  // namespace

std::vector<std::string> Bm25Index::terms(std::string_view text) {
  std::vector<std::string> out;
  for_each_word(text, [&](const std::string& word) { out.push_back(text::porter_stem(word)); });
  return out;
}

std::vector<std::string> Bm25Index::query_terms(std::string_view query) {
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  for_each_word(query, [&](const std::string& word) {
    if (seen.insert(word).second) words.push_back(word);
  });
  const bool all_stop_words =
      std::all_of(words.begin(), words.end(), [](const std::string& w) { return text::is_english_stop_word(w); });
  std::vector<std::string> out;
  std::unordered_set<std::string> stems;
  for (const auto& word : words) {
    if (!all_stop_words && text::is_english_stop_word(word)) continue;
    std::string stem = text::porter_stem(word);
    if (stems.insert(stem).second) out.push_back(std::move(stem));
    if (out.size() == kMaxQueryTerms) break;
  }
  return out;
}

std::uint32_t Bm25Index::term_id(std::string_view term) {
  if (const auto found = term_ids_.find(term); found != term_ids_.end()) return found->second;
  const auto id = static_cast<std::uint32_t>(postings_.size());
  term_ids_.emplace(std::string(term), id);
  postings_.emplace_back();
  return id;
}

std::uint32_t Bm25Index::word_term_id(const std::string& word) {
  // FNV-1a, 64-bit.
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : word) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  std::size_t mask = word_table_.size() - 1;
  std::size_t i = hash & mask;
  for (; word_table_[i].term != UINT32_MAX; i = (i + 1) & mask) {
    const WordEntry& entry = word_table_[i];
    if (entry.hash == hash && entry.length == word.size() &&
        word_arena_.compare(entry.offset, entry.length, word) == 0) {
      return entry.term;
    }
  }
  const std::uint32_t term = term_id(text::porter_stem(word));
  KOTAE_ASSERT(word_arena_.size() + word.size() < UINT32_MAX);
  word_table_[i] = {hash, static_cast<std::uint32_t>(word_arena_.size()), static_cast<std::uint32_t>(word.size()),
                    term};
  word_arena_ += word;
  if (++word_count_ * 2 > word_table_.size()) {  // keep it at most half full
    std::vector<WordEntry> grown(word_table_.size() * 2);
    mask = grown.size() - 1;
    for (const WordEntry& entry : word_table_) {
      if (entry.term == UINT32_MAX) continue;
      std::size_t j = entry.hash & mask;
      while (grown[j].term != UINT32_MAX) j = (j + 1) & mask;
      grown[j] = entry;
    }
    word_table_ = std::move(grown);
  }
  return term;
}

void Bm25Index::add(std::int64_t chunk_id, std::int64_t document_id, std::string_view text,
                    std::string_view heading_text) {
  if (slot_of_chunk_.contains(chunk_id)) remove(chunk_id);
  KOTAE_ASSERT(slot_chunk_.size() < UINT32_MAX);
  const auto slot = static_cast<std::uint32_t>(slot_chunk_.size());
  // Frequencies summed per term in a dense array by term id (0 = not in this chunk yet), which is
  // cheaper than sorting the occurrences; reset after use.
  thread_local std::vector<float> frequencies;
  thread_local std::vector<std::uint32_t> chunk_terms;
  chunk_terms.clear();
  std::size_t words = 0;
  auto count = [&](std::uint32_t term, float weight) {
    if (frequencies.size() <= term) frequencies.resize(std::max<std::size_t>(postings_.size(), 1024), 0.0f);
    if (frequencies[term] == 0.0f) chunk_terms.push_back(term);
    frequencies[term] += weight;
    ++words;
  };
  for_each_word(text, [&](const std::string& word) { count(word_term_id(word), 1.0f); });
  for_each_word(heading_text, [&](const std::string& word) { count(word_term_id(word), kHeadingWeight); });
  for (const std::uint32_t term : chunk_terms) {
    postings_[term].push_back({slot, frequencies[term]});
    frequencies[term] = 0.0f;
  }
  const auto length = static_cast<float>(words);
  slot_chunk_.push_back(chunk_id);
  slot_document_.push_back(document_id);
  slot_length_.push_back(length);
  live_.push_back(1);
  slot_of_chunk_.emplace(chunk_id, slot);
  total_length_ += length;
}

bool Bm25Index::remove(std::int64_t chunk_id) {
  const auto found = slot_of_chunk_.find(chunk_id);
  if (found == slot_of_chunk_.end()) return false;
  const std::uint32_t slot = found->second;
  slot_of_chunk_.erase(found);
  live_[slot] = 0;
  total_length_ -= slot_length_[slot];
  ++dead_slots_;
  if (slot_of_chunk_.empty()) total_length_ = 0;  // no drift left over from float sums
  if (static_cast<double>(dead_slots_) > kCompactAbove * static_cast<double>(slot_chunk_.size())) compact();
  return true;
}

void Bm25Index::compact() {
  std::vector<std::uint32_t> new_slot(slot_chunk_.size(), UINT32_MAX);
  std::uint32_t next = 0;
  for (std::uint32_t slot = 0; slot < slot_chunk_.size(); ++slot) {
    if (!live_[slot]) continue;
    new_slot[slot] = next;
    slot_chunk_[next] = slot_chunk_[slot];
    slot_document_[next] = slot_document_[slot];
    slot_length_[next] = slot_length_[slot];
    slot_of_chunk_[slot_chunk_[next]] = next;
    ++next;
  }
  slot_chunk_.resize(next);
  slot_document_.resize(next);
  slot_length_.resize(next);
  live_.assign(next, 1);
  for (auto& list : postings_) {
    std::size_t kept = 0;
    for (const Posting& posting : list) {
      const std::uint32_t moved = new_slot[posting.slot];
      if (moved != UINT32_MAX) list[kept++] = {moved, posting.frequency};
    }
    list.resize(kept);
    if (list.capacity() > 2 * kept + 8) list.shrink_to_fit();
  }
  dead_slots_ = 0;
}

std::vector<Bm25Hit> Bm25Index::search(std::span<const std::string> query, std::size_t k,
                                       const DocumentPredicate* allow) const {
  const std::size_t chunks = slot_of_chunk_.size();
  if (k == 0 || chunks == 0 || query.empty()) return {};
  thread_local SearchScratch scratch;
  if (scratch.scores.size() < slot_chunk_.size()) scratch.scores.resize(slot_chunk_.size(), 0.0f);
  float* const scores = scratch.scores.data();
  std::vector<std::uint32_t>& touched = scratch.touched;
  touched.clear();

  const double n_chunks = static_cast<double>(chunks);
  const float average_length = static_cast<float>(std::max(total_length_ / n_chunks, 1e-9));
  // k1 (1 - b + b dl / avgdl) = norm_base + norm_per_token dl
  const float norm_base = kK1 * (1 - kB);
  const float norm_per_token = kK1 * kB / average_length;
  const float* const lengths = slot_length_.data();
  const std::uint8_t* const live = live_.data();
  const bool any_dead = dead_slots_ != 0;

  for (const std::string& term : query) {
    const auto found = term_ids_.find(std::string_view(term));
    if (found == term_ids_.end()) continue;
    const std::vector<Posting>& list = postings_[found->second];
    std::size_t containing = list.size();
    if (any_dead) {
      containing = 0;
      for (const Posting& posting : list) containing += live[posting.slot];
    }
    if (containing == 0) continue;
    const auto n = static_cast<double>(containing);
    const auto idf = static_cast<float>(std::log(1.0 + (n_chunks - n + 0.5) / (n + 0.5)));
    const float numerator_scale = idf * (kK1 + 1);
    for (const Posting& posting : list) {
      const std::uint32_t slot = posting.slot;
      if (any_dead && !live[slot]) continue;
      const float contribution =
          numerator_scale * posting.frequency / (posting.frequency + norm_base + norm_per_token * lengths[slot]);
      const float before = scores[slot];
      if (before == 0.0f) touched.push_back(slot);
      scores[slot] = before + contribution;
    }
  }

  std::vector<std::pair<float, std::uint32_t>> candidates;
  candidates.reserve(allow == nullptr ? touched.size() : std::min<std::size_t>(touched.size(), 4096));
  for (const std::uint32_t slot : touched) {
    if (allow == nullptr || (*allow)(slot_document_[slot])) candidates.emplace_back(scores[slot], slot);
    scores[slot] = 0.0f;
  }
  touched.clear();
  const auto better = [&](const std::pair<float, std::uint32_t>& a, const std::pair<float, std::uint32_t>& b) {
    return a.first != b.first ? a.first > b.first : slot_chunk_[a.second] < slot_chunk_[b.second];
  };
  const std::size_t keep = std::min(k, candidates.size());
  if (keep < candidates.size()) {
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                     better);
    candidates.resize(keep);
  }
  std::sort(candidates.begin(), candidates.end(), better);
  std::vector<Bm25Hit> hits;
  hits.reserve(keep);
  for (const auto& [score, slot] : candidates) hits.push_back({slot_chunk_[slot], slot_document_[slot], score});
  return hits;
}

}  // namespace kotae::store
