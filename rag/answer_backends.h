#pragma once
// The answer back-ends a command or the server was configured with, set up in order: a local GGUF model
// (llama.cpp), an OpenAI-compatible server, the answer workers behind the work queue, extractive
// sentences. One that cannot be set up (model missing, bad URL) stays in the list with the reason, so
// the pipeline reports why it fell back.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/llama_generator.h"
#include "model/openai_chat_client.h"
#include "rag/answer_pipeline.h"

namespace kotae::rag {

struct BackendSettings {
  std::filesystem::path data_dir;
  std::vector<std::string> order;  // llama, openai, workers, extractive; empty: those configured, then extractive
  std::string model;               // a model in DATA/models with a "gguf" file (kotae model add installs one)
  std::string chat_template;       // a llama.cpp built-in template name; empty: the model's own
  int context = 4096;              // each slot's
  int parallel = 0;             // requests the local model answers at once (0: as its KV cache budget allows, up to 8)
  std::size_t max_queued = 64;  // requests waiting for one of its slots; more are refused (503, Retry-After)
  int threads = 0;
  int niceness = 0;     // added to the local model's threads' nice value (the server: 10, quick requests first)
  int gpu_layers = -1;  // generator layers offloaded to a GPU (llama.cpp built with --cuda); -1: all, 0: none
  std::string openai_url;
  std::string openai_model;
  std::string openai_api_key;
  long openai_timeout_ms = 120000;
  // The answer workers (queue/queued_generator.h), made by whoever has the work queue (the server).
  std::shared_ptr<Generator> workers;
};

struct AnswerBackends {
  std::vector<AnswerBackend> order;

  // The first back-end with a generator (plain chat needs one), or null.
  Generator* first_generator() const;
};

// invalid_argument for an unknown back-end name; a back-end that cannot be set up is not an error.
Result<AnswerBackends> set_up_backends(const BackendSettings& settings);

// The "gguf" file of a generator model installed in DATA/models, once it passed the integrity gate.
Result<std::filesystem::path> find_gguf(const std::filesystem::path& data_dir, const std::string& model);

}  // namespace kotae::rag
