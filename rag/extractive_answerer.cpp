#include "rag/extractive_answerer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>

#include "model/encoder.h"
#include "rag/standalone_sentence.h"

namespace kotae::rag {
namespace {

// A sentence, or a fragment joined with the sentence it was cut from, that may go in the answer.
struct Candidate {
  std::size_t source;
  std::size_t first, last;  // [first, last] indices into the source's sentences
  std::size_t begin, end;   // bytes of the source's text
  std::span<const float> vector;
  float similarity;
};

bool has_letter(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || (c & 0x80); });
}

// A title or heading: a few words without a sentence's final mark.
bool is_heading(std::string_view s) {
  if (s.empty() || std::string_view(".!:;)\"'").find(s.back()) != std::string_view::npos) return false;
  return std::count(s.begin(), s.end(), ' ') < 8;
}

// A question (an FAQ's heading, a rhetorical one) restates what was asked; it answers nothing.
bool is_question(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '"' || s.back() == '\'' || s.back() == ')')) s.remove_suffix(1);
  return !s.empty() && s.back() == '?';
}

// Sentence k of a source reads on from sentence k - 1: nothing but a line's or a space's worth of
// whitespace between them (a blank line ends a paragraph, and what follows one is no continuation).
bool follows_directly(std::string_view text, const store::SentenceVector& head, const store::SentenceVector& next) {
  const std::string_view gap = text.substr(head.end, next.begin - head.end);
  return head.end <= next.begin && std::count(gap.begin(), gap.end(), '\n') < 2 &&
         std::all_of(gap.begin(), gap.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

// The unit vector between two: a joined sentence's, pooled as the mean of its parts.
std::vector<float> mean_direction(std::span<const float> a, std::span<const float> b) {
  std::vector<float> v(a.size());
  double norm = 0;
  for (std::size_t i = 0; i < v.size() && i < b.size(); ++i) {
    v[i] = a[i] + b[i];
    norm += double(v[i]) * v[i];
  }
  if (norm > 0) {
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
  }
  return v;
}

// Sentence k of `source` as a candidate: itself, or joined with its head when it is a fragment or
// goes on from the sentence before; none when it cannot stand in an answer.
std::optional<Candidate> candidate(std::string_view question, const Source& source, std::size_t index,
                                   std::span<const store::SentenceVector> sentences, std::size_t k,
                                   std::deque<std::vector<float>>& joined, const ExtractiveOptions& options) {
  const store::SentenceVector& s = sentences[k];
  const std::string_view text = std::string_view(source.text).substr(s.begin, s.end - s.begin);
  Candidate c{
      .source = index, .first = k, .last = k, .begin = s.begin, .end = s.end, .vector = s.vector, .similarity = 0};
  // A table's row answers as a row, whole (its citation brings the header): not judged as a sentence.
  if (const auto row = table_row_at(source.text, s.begin); row && s.end <= row->end) {
    if (k > 0 && sentences[k - 1].begin >= row->begin) return std::nullopt;  // the row's first sentence stands for it
    const std::string_view line = std::string_view(source.text).substr(row->begin, row->end - row->begin);
    if (!has_letter(line) && line.find_first_of("0123456789") == std::string_view::npos) return std::nullopt;
    c.begin = row->begin;
    c.end = row->end;
    return c;
  }
  if (is_fragment(text) || continues_previous(text)) {
    if (k == 0 || !follows_directly(source.text, sentences[k - 1], s)) return std::nullopt;
    const store::SentenceVector& head = sentences[k - 1];
    const std::string_view head_text = std::string_view(source.text).substr(head.begin, head.end - head.begin);
    if (is_fragment(head_text) || is_question(head_text)) return std::nullopt;
    joined.push_back(mean_direction(head.vector, s.vector));
    c.first = k - 1;
    c.begin = head.begin;
    c.vector = joined.back();
  }
  const std::string_view whole = std::string_view(source.text).substr(c.begin, c.end - c.begin);
  if (whole.size() < options.min_bytes || !has_letter(whole) || is_question(whole) || is_heading(whole) ||
      !is_complete_sentence(whole) || points_elsewhere(whole) || restates_question(whole, question)) {
    return std::nullopt;
  }
  return c;
}

// A sentence on "It ..." or "This ..." does not stand without its antecedent: it takes the sentence
// before it along, when that one is a plain sentence it reads on from and not already in the answer
// (`previous`, the sentence picked before it in reading order, if any).
void bring_antecedent(Candidate& c, const Candidate* previous, std::span<const Source> sources,
                      std::span<const std::vector<store::SentenceVector>> sentences) {
  const Source& source = sources[c.source];
  const std::string_view text = source.text;
  const auto& all = sentences[c.source];
  if (!starts_with_anaphor(text.substr(c.begin, c.end - c.begin)) || c.first == 0) return;
  const store::SentenceVector& head = all[c.first - 1];
  if (previous != nullptr && sources[previous->source].document == source.document &&
      sources[previous->source].begin + previous->end > source.begin + head.begin) {
    return;
  }
  const std::string_view head_text = text.substr(head.begin, head.end - head.begin);
  if (!follows_directly(text, head, all[c.first]) || is_fragment(head_text) || is_question(head_text) ||
      !is_complete_sentence(head_text) || points_elsewhere(head_text)) {
    return;
  }
  c.first -= 1;
  c.begin = head.begin;
}

}  // namespace

CitedAnswer extract_answer(std::string_view question, std::span<const float> question_vector,
                           std::span<const Source> sources,
                           std::span<const std::vector<store::SentenceVector>> sentences,
                           const ExtractiveOptions& options) {
  std::vector<Candidate> candidates;
  std::deque<std::vector<float>> joined;  // joined sentences' vectors; a deque keeps them in place
  float best = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < sources.size() && i < sentences.size(); ++i) {
    for (std::size_t k = 0; k < sentences[i].size(); ++k) {
      auto c = candidate(question, sources[i], i, sentences[i], k, joined, options);
      if (!c) continue;
      c->similarity = dot(question_vector, c->vector);
      if (table_row_at(sources[i].text, c->begin)) {
        const std::string_view row = std::string_view(sources[i].text).substr(c->begin, c->end - c->begin);
        c->similarity += static_cast<float>(options.row_word_weight * shared_content_words(row, question));
      }
      candidates.push_back(*c);
      best = std::max(best, c->similarity);
    }
  }
  const float floor = best > 0 ? static_cast<float>(options.relative_floor) * best : best;
  std::erase_if(candidates, [&](const Candidate& c) { return c.similarity < floor; });

  // Overlapping chunks hold the same sentence twice, and documents repeat themselves: the same
  // document bytes, or the same words, are never picked twice.
  auto text_of = [&](const Candidate& c) {
    return std::string_view(sources[c.source].text).substr(c.begin, c.end - c.begin);
  };
  auto overlaps = [&](const Candidate& a, const Candidate& b) {
    const Source& sa = sources[a.source];
    const Source& sb = sources[b.source];
    if (text_of(a) == text_of(b)) return true;
    if (sa.document != sb.document) return false;
    const std::size_t a0 = sa.begin + a.begin, a1 = sa.begin + a.end;
    const std::size_t b0 = sb.begin + b.begin, b1 = sb.begin + b.end;
    return a0 < b1 && b0 < a1;
  };
  std::vector<Candidate> picked;
  const auto lambda = static_cast<float>(options.relevance_weight);
  while (picked.size() < options.max_sentences && !candidates.empty()) {
    std::size_t choice = 0;
    float choice_score = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      float redundancy = 0;
      for (const auto& p : picked) redundancy = std::max(redundancy, dot(candidates[c].vector, p.vector));
      const float score = lambda * candidates[c].similarity - (1 - lambda) * redundancy;
      if (score > choice_score) {
        choice_score = score;
        choice = c;
      }
    }
    const Candidate chosen = candidates[choice];
    picked.push_back(chosen);
    std::erase_if(candidates, [&](const Candidate& c) { return overlaps(c, chosen); });
  }

  // The best sentence's document first, then the other documents by their best sentence; within a
  // document, sentences in the order they appear, so the answer reads as the text does.
  auto document_rank = [&](const Candidate& c) {
    for (std::size_t i = 0; i < picked.size(); ++i) {
      if (sources[picked[i].source].document == sources[c.source].document) return i;
    }
    return picked.size();
  };
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (document rank, byte offset) per picked
  for (const auto& p : picked) order.emplace_back(document_rank(p), sources[p.source].begin + p.begin);
  std::vector<std::size_t> index(picked.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) { return order[a] < order[b]; });
  std::vector<Candidate> ordered;
  for (const std::size_t i : index) ordered.push_back(picked[i]);
  picked = std::move(ordered);
  for (std::size_t i = 0; i < picked.size(); ++i) {
    bring_antecedent(picked[i], i > 0 ? &picked[i - 1] : nullptr, sources, sentences);
  }

  // Sentences run on in one paragraph; table rows stand on their own lines under their table's
  // header, shown once for the rows of one table, with the marker in the last cell.
  CitedAnswer out;
  std::string open_table;  // the header of the table the answer's last line is a row of
  for (const auto& p : picked) {
    const Source& source = sources[p.source];
    Citation c = cite(source, p.begin, p.end);
    const bool row = !c.table_header.empty();
    if (row && c.table_header == open_table) {
      out.text += '\n';
    } else if (row || !open_table.empty()) {
      if (!out.text.empty()) out.text += "\n\n";
      if (row) out.text.append(c.table_header).append("\n");
    } else if (!out.text.empty()) {
      out.text += ' ';
    }
    const std::string_view body = row ? std::string_view(c.text).substr(0, c.text.size() - 1) : c.text;
    for (const char ch : body) out.text += (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
    if (!row) out.text += ' ';
    c.answer_start = out.text.size();
    out.text += citation_marker(source.number);
    c.answer_end = out.text.size();
    if (row) out.text += " |";
    out.citations.push_back(std::move(c));
    open_table = row ? out.citations.back().table_header : std::string();
  }
  return out;
}

}  // namespace kotae::rag
