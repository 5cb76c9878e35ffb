#include "rag/answer_cache.h"

#include <nlohmann/json.hpp>

#include "store/metadata_filter.h"

namespace kotae::rag {

AnswerCache::AnswerCache(AnswerCacheOptions options) : options_(options) {}

std::optional<Answer> AnswerCache::find(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end() && Clock::now() - it->second.stored > options_.ttl) {
    order_.erase(it->second.position);
    entries_.erase(it);
    ++stats_.evictions;
    it = entries_.end();
  }
  if (it == entries_.end()) {
    ++stats_.misses;
    return std::nullopt;
  }
  ++stats_.hits;
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.answer;
}

void AnswerCache::put(const std::string& key, const Answer& answer) {
  if (options_.capacity == 0) return;
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second.answer = answer;
    it->second.stored = Clock::now();
    order_.splice(order_.begin(), order_, it->second.position);
    return;
  }
  order_.push_front(key);
  entries_.emplace(key, Entry{answer, Clock::now(), order_.begin()});
  while (entries_.size() > options_.capacity) {
    entries_.erase(order_.back());
    order_.pop_back();
    ++stats_.evictions;
  }
}

AnswerCacheStats AnswerCache::stats() const {
  std::lock_guard lock(mutex_);
  auto out = stats_;
  out.size = entries_.size();
  return out;
}

std::string answer_cache_key(std::string_view scope, std::string_view question, const AnswerOptions& o,
                             const std::vector<AnswerBackend>& backends) {
  std::string words;
  for (std::size_t i = 0; i < question.size();) {
    const auto start = question.find_first_not_of(" \t\r\n", i);
    if (start == std::string_view::npos) break;
    const auto end = std::min(question.find_first_of(" \t\r\n", start), question.size());
    if (!words.empty()) words += ' ';
    words.append(question.substr(start, end - start));
    i = end;
  }
  std::vector<std::string> names;
  for (const auto& b : backends) names.push_back(b.answerer ? b.name + ":" + b.answerer->id() : b.name);
  const auto& s = o.search;
  const auto& g = o.generation;
  // A JSON array: unambiguous, whatever the strings hold.
  return nlohmann::json::array({scope,
                                words,
                                search::to_string(s.mode),
                                s.k,
                                s.candidates,
                                s.rrf_k,
                                s.filter.path_prefix,
                                s.filter.formats,
                                s.filter.documents,
                                s.filter.where ? s.filter.where->text() : std::string(),
                                s.rerank,
                                s.rerank_candidates,
                                o.min_relevance,
                                g.max_tokens,
                                g.temperature,
                                g.top_p,
                                g.seed ? nlohmann::json(*g.seed) : nlohmann::json(nullptr),
                                g.stop,
                                names,
                                o.extractive.max_sentences,
                                o.extractive.relevance_weight,
                                o.extractive.relative_floor,
                                o.extractive.min_bytes})
      .dump();
}

}  // namespace kotae::rag
