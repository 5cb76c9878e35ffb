#pragma once
// A retrieval dataset in BEIR's layout: DIR/corpus.jsonl ({"_id", "title", "text"} per line),
// DIR/queries.jsonl ({"_id", "text"}), DIR/qrels/test.tsv (query-id, corpus-id, score; a header
// line). Only queries that have judgements are kept.

#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "search/retrieval_metrics.h"

namespace kotae::rag {

struct BeirDocument {
  std::string id, title, text;
};

struct BeirQuery {
  std::string id, text;
};

struct BeirDataset {
  std::vector<BeirDocument> corpus;
  std::vector<BeirQuery> queries;
  std::unordered_map<std::string, search::Judgements> qrels;  // by query id
};

Result<BeirDataset> load_beir_dataset(const std::filesystem::path& dir);

}  // namespace kotae::rag
