#pragma once
// `kotae ask "QUESTION" --collection NAME`: a grounded answer, streamed as it is produced, then its
// sources. Back-ends are tried in order: a local GGUF model (--model), an OpenAI-compatible server
// (--openai-url), then extractive sentences (always available, the default). `--json` prints one
// object with the answer, the back-end, citations (document, page, byte span, text) and the time of
// every stage.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rag/answer_backends.h"
#include "store/catalog.h"

namespace kotae::cli {

struct AskOptions {
  store::CatalogOptions where;  // the store (--store, --index-cache) and the data directory (models)
  std::string collection;
  std::string question;
  rag::BackendSettings backend;  // data_dir and the API key are filled in by run_ask
  std::string openai_key_env = "OPENAI_API_KEY";
  int max_tokens = 512;
  float temperature = 0.2f;
  float top_p = 0.95f;
  std::optional<std::uint32_t> seed;
  std::vector<std::string> stop;
  std::size_t k = 5;
  std::string mode = "hybrid";
  std::string rerank_model;
  std::string where_filter;             // --where: a metadata filter (docs/search.md#metadata-filters)
  std::vector<std::int64_t> documents;  // --document: only these document ids
  double min_relevance = 0.3;
  bool json = false;
};

int run_ask(const AskOptions& options);

}  // namespace kotae::cli
