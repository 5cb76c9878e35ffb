#include "rag/retrieval_evaluation.h"

#include <algorithm>
#include <cmath>

#include "core/percentile.h"
#include "core/sha256.h"
#include "text/loaders/loader.h"

namespace kotae::rag {

Result<IngestSummary> index_beir_corpus(Ingester& ingester, const BeirDataset& dataset,
                                        const std::function<void(std::size_t, std::size_t)>& on_progress) {
  IngestSummary summary;
  for (std::size_t i = 0; i < dataset.corpus.size(); ++i) {
    const auto& entry = dataset.corpus[i];
    const std::string content = entry.title.empty() ? entry.text : entry.title + "\n\n" + entry.text;
    ++summary.files;
    auto document = text::load_document_bytes(content, "txt");
    if (!document) {  // nothing but whitespace
      ++summary.failed;
      continue;
    }
    document->title = entry.title;
    auto report = ingester.ingest_document(entry.id, *document, sha256_hex(content));
    if (!report) return report.error();
    if (report->status == FileStatus::indexed) {
      ++summary.indexed;
      summary.chunks += report->chunks;
      summary.bytes += report->bytes;
    } else {
      ++summary.unchanged;
    }
    if (on_progress) on_progress(i + 1, dataset.corpus.size());
  }
  return summary;
}

Result<std::vector<ModeEvaluation>> evaluate_retrieval(const search::HybridRetriever& retriever, const Encoder& encoder,
                                                       const BeirDataset& dataset, const EvaluationOptions& options) {
  std::vector<std::string> texts;
  for (const auto& query : dataset.queries) texts.push_back(query.text);
  auto vectors = encoder.embed(texts, TextRole::query);
  if (!vectors) return vectors.error();

  std::vector<ModeEvaluation> evaluations;
  for (const auto mode : options.modes) {
    search::SearchOptions search = options.search;
    search.mode = mode;
    search.k = options.chunk_depth;
    search.candidates = std::max(search.candidates, options.chunk_depth);
    search::MetricsAccumulator metrics;
    std::vector<double> latencies;
    bool reranked = false;
    for (std::size_t q = 0; q < dataset.queries.size(); ++q) {
      auto result = retriever.search_embedded(dataset.queries[q].text, vectors->row(q), search);
      if (!result) return result.error();
      latencies.push_back(result->timing.total);
      if (options.on_ranking) options.on_ranking(mode, dataset.queries[q].id, result->hits);
      std::vector<std::string> chunk_documents;
      for (const auto& hit : result->hits) {
        chunk_documents.push_back(hit.document_path);
        reranked = reranked || hit.rerank_score.has_value();
      }
      metrics.add(search::rank_documents(chunk_documents), dataset.qrels.at(dataset.queries[q].id));
    }
    evaluations.push_back({mode, reranked, metrics.result(), percentile(latencies, 50), percentile(latencies, 99)});
  }
  return evaluations;
}

}  // namespace kotae::rag
