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

namespace kotae::cli {

struct AskOptions {
  std::filesystem::path data_dir;
  std::string collection;
  std::string question;
  std::vector<std::string> backends;  // order to try: llama, openai, extractive; empty: those configured, then extractive
  std::string model;                  // GGUF file, or a model in DATA/models with a "gguf" file
  std::string chat_template;          // a llama.cpp built-in template name; empty: the model's own
  int context = 4096;
  int threads = 0;
  std::string openai_url;
  std::string openai_model;
  std::string openai_key_env = "OPENAI_API_KEY";
  long openai_timeout_ms = 120000;
  int max_tokens = 512;
  float temperature = 0.2f;
  float top_p = 0.95f;
  std::optional<std::uint32_t> seed;
  std::vector<std::string> stop;
  std::size_t k = 5;
  std::string mode = "hybrid";
  std::string rerank_model;
  double min_relevance = 0.3;
  bool json = false;
};

int run_ask(const AskOptions& options);

}  // namespace kotae::cli
