#include "rag/extractive_answerer.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace kotae::rag {
namespace {

float dot(std::span<const float> a, std::span<const float> b) {
  float sum = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) sum += a[i] * b[i];
  return sum;
}

struct Candidate {
  std::size_t source;
  const store::SentenceVector* sentence;
  float similarity;
};

bool has_letter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || (c & 0x80); });
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

}  // namespace

CitedAnswer extract_answer(std::span<const float> question, std::span<const Source> sources,
                           std::span<const std::vector<store::SentenceVector>> sentences,
                           const ExtractiveOptions& options) {
  std::vector<Candidate> candidates;
  float best = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < sources.size() && i < sentences.size(); ++i) {
    for (const auto& s : sentences[i]) {
      const std::string_view text = std::string_view(sources[i].text).substr(s.begin, s.end - s.begin);
      if (text.size() < options.min_bytes || !has_letter(text) || is_question(text) || is_heading(text)) continue;
      const float similarity = dot(question, s.vector);
      candidates.push_back({i, &s, similarity});
      best = std::max(best, similarity);
    }
  }
  const float floor = best > 0 ? static_cast<float>(options.relative_floor) * best : best;
  std::erase_if(candidates, [&](const Candidate& c) { return c.similarity < floor; });

  // Overlapping chunks hold the same sentence twice, and documents repeat themselves: the same
  // document bytes, or the same words, are never picked twice.
  auto text_of = [&](const Candidate& c) {
    return std::string_view(sources[c.source].text).substr(c.sentence->begin, c.sentence->end - c.sentence->begin);
  };
  auto overlaps = [&](const Candidate& a, const Candidate& b) {
    const Source& sa = sources[a.source];
    const Source& sb = sources[b.source];
    if (text_of(a) == text_of(b)) return true;
    if (sa.document != sb.document) return false;
    const std::size_t a0 = sa.begin + a.sentence->begin, a1 = sa.begin + a.sentence->end;
    const std::size_t b0 = sb.begin + b.sentence->begin, b1 = sb.begin + b.sentence->end;
    return a0 < b1 && b0 < a1;
  };
  std::vector<Candidate> picked;
  const auto lambda = static_cast<float>(options.relevance_weight);
  while (picked.size() < options.max_sentences && !candidates.empty()) {
    std::size_t choice = 0;
    float choice_score = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      float redundancy = 0;
      for (const auto& p : picked) redundancy = std::max(redundancy, dot(candidates[c].sentence->vector, p.sentence->vector));
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
  for (const auto& p : picked) order.emplace_back(document_rank(p), sources[p.source].begin + p.sentence->begin);
  std::vector<std::size_t> index(picked.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) { return order[a] < order[b]; });
  std::vector<Candidate> ordered;
  for (const std::size_t i : index) ordered.push_back(picked[i]);
  picked = std::move(ordered);

  CitedAnswer out;
  for (const auto& p : picked) {
    const Source& source = sources[p.source];
    Citation c = cite(source, p.sentence->begin, p.sentence->end);
    if (!out.text.empty()) out.text += ' ';
    for (const char ch : c.text) out.text += (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
    out.text += ' ';
    c.answer_start = out.text.size();
    out.text += citation_marker(source.number);
    c.answer_end = out.text.size();
    out.citations.push_back(std::move(c));
  }
  return out;
}

}  // namespace kotae::rag
