#include "rag/beir_dataset.h"

#include <fstream>
#include <sstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace kotae::rag {
namespace {

namespace fs = std::filesystem;

// Calls `row` with each JSON object of a .jsonl file; a malformed line is a corrupt error naming it.
template <class F>
Result<void> read_jsonl(const fs::path& file, F&& row) {
  std::ifstream in(file);
  if (!in) return make_error(ErrorCode::not_found, file.string() + ": cannot open");
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto object = nlohmann::json::parse(line, nullptr, false);
    if (object.is_discarded() || !object.is_object() || !object.contains("_id"))
      return make_error(ErrorCode::corrupt,
                        file.string() + ":" + std::to_string(number) + ": not a JSON object with \"_id\"");
    row(object);
  }
  return {};
}

std::string string_field(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

Result<BeirDataset> load_beir_dataset(const fs::path& dir) {
  BeirDataset dataset;
  auto corpus = read_jsonl(dir / "corpus.jsonl", [&](const nlohmann::json& o) {
    dataset.corpus.push_back({string_field(o, "_id"), string_field(o, "title"), string_field(o, "text")});
  });
  if (!corpus) return corpus.error();

  const fs::path qrels_file = dir / "qrels" / "test.tsv";
  std::ifstream qrels(qrels_file);
  if (!qrels) return make_error(ErrorCode::not_found, qrels_file.string() + ": cannot open");
  std::string line;
  for (std::size_t number = 1; std::getline(qrels, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.starts_with("query-id"))) continue;
    std::istringstream fields(line);
    std::string query_id, corpus_id, score;
    if (!std::getline(fields, query_id, '\t') || !std::getline(fields, corpus_id, '\t') || !std::getline(fields, score))
      return make_error(ErrorCode::corrupt, qrels_file.string() + ":" + std::to_string(number) +
                                                ": expected query-id<TAB>corpus-id<TAB>score");
    try {
      dataset.qrels[query_id][corpus_id] = std::stoi(score);
    } catch (const std::exception&) {
      return make_error(ErrorCode::corrupt,
                        qrels_file.string() + ":" + std::to_string(number) + ": score is not an integer");
    }
  }

  auto queries = read_jsonl(dir / "queries.jsonl", [&](const nlohmann::json& o) {
    BeirQuery query{string_field(o, "_id"), string_field(o, "text")};
    if (dataset.qrels.contains(query.id)) dataset.queries.push_back(std::move(query));
  });
  if (!queries) return queries.error();
  if (dataset.corpus.empty()) return make_error(ErrorCode::invalid_argument, dir.string() + ": the corpus is empty");
  if (dataset.queries.empty())
    return make_error(ErrorCode::invalid_argument, dir.string() + ": no query has judgements in qrels/test.tsv");
  return dataset;
}

}  // namespace kotae::rag
