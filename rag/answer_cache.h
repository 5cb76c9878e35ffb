#pragma once
// Answers kept for questions asked again: an LRU with a time to live. The key names everything the
// answer depends on (the collection and its generation, the question, retrieval and generation
// settings, the back-ends), so a change to the collection makes its old entries unreachable at once;
// they then age out.

#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rag/answer_pipeline.h"

namespace kotae::rag {

struct AnswerCacheOptions {
  std::size_t capacity = 1024;    // answers kept (0: no cache)
  std::chrono::seconds ttl{600};  // an answer older than this is asked again
};

struct AnswerCacheStats {
  std::uint64_t hits = 0, misses = 0, evictions = 0;
  std::size_t size = 0;
};

class AnswerCache {
 public:
  explicit AnswerCache(AnswerCacheOptions options = {});

  std::optional<Answer> find(const std::string& key);
  void put(const std::string& key, const Answer& answer);
  AnswerCacheStats stats() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Answer answer;
    Clock::time_point stored;
    std::list<std::string>::iterator position;
  };

  AnswerCacheOptions options_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // most recently used first
  std::unordered_map<std::string, Entry> entries_;
  AnswerCacheStats stats_;
};

// `scope` names the collection and its state ("tenant/name@generation"). Questions that differ only in
// surrounding or repeated white space share a key.
std::string answer_cache_key(std::string_view scope, std::string_view question, const AnswerOptions& options,
                             const std::vector<AnswerBackend>& backends);

}  // namespace kotae::rag
