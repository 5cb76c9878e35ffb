#pragma once
// Retrieval quality at the document level, as BEIR and pytrec_eval compute it: MRR@10, nDCG@10
// (linear gain, ideal ranking from the judgements), Recall@10 and Recall@100, averaged over queries.
// A document ranks where its best chunk ranks (rank_documents).

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace kotae::search {

// Relevance grade (> 0 relevant) of each judged document for one query.
using Judgements = std::unordered_map<std::string, int>;

struct RetrievalMetrics {
  double mrr_at_10 = 0, ndcg_at_10 = 0, recall_at_10 = 0, recall_at_100 = 0;
  std::size_t queries = 0;
};

// Collapses a chunk-level ranking (one document id per chunk, best first) to documents: each
// document once, at the position of its first (best) chunk.
std::vector<std::string> rank_documents(const std::vector<std::string>& chunk_documents);

class MetricsAccumulator {
 public:
  // `ranked` is a document ranking, best first. Queries without a relevant document are skipped,
  // as pytrec_eval does.
  void add(const std::vector<std::string>& ranked, const Judgements& judgements);
  RetrievalMetrics result() const;

 private:
  RetrievalMetrics sum_;
};

}  // namespace kotae::search
