#pragma once
// llama.cpp behind Kotae's own types: what the library is (version, backends, devices) and a model
// that turns token ids into next-token logits. Generation builds on this.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae {

struct LlamaBuildInfo {
  std::string version;  // llama.cpp's version string
  std::string ggml_version;
  std::string ggml_commit;
  std::string backend_dir;            // where the ggml backend libraries were loaded from
  std::vector<std::string> backends;  // e.g. {"CPU"}
  std::vector<std::string> devices;   // e.g. {"CPU: Intel(R) Xeon(R) ..."}
  bool gpu_offload = false;           // a GPU back-end (scripts/setup --cuda) with a device to offload layers to
  // What ggml's CPU back-end was compiled to use (e.g. {"AVX2", "AVX512", "AVX512_VNNI", "AMX_INT8"}), and
  // the weight layouts it repacks matrices into where this CPU allows ("AMX" tiles, "CPU_REPACK").
  std::vector<std::string> cpu_features;
  std::vector<std::string> cpu_weight_layouts;
  bool uses_amx() const;  // AMX compiled in and granted by the kernel: quantised matrices run on tiles
};

// Loads the ggml backends once per process and describes them.
const LlamaBuildInfo& llama_build_info();

struct LlamaModelOptions {
  int context_length = 512;
  int threads = 0;      // 0: all cores
  int gpu_layers = -1;  // layers offloaded where llama.cpp has a GPU back-end; -1: all, 0: none
};

class LlamaModel {
 public:
  static Result<std::unique_ptr<LlamaModel>> load(const std::filesystem::path& gguf,
                                                  const LlamaModelOptions& options = {});
  ~LlamaModel();
  LlamaModel(const LlamaModel&) = delete;
  LlamaModel& operator=(const LlamaModel&) = delete;

  int vocab_size() const;
  int embedding_length() const;
  std::string description() const;

  // Evaluates the tokens from an empty context; returns tokens.size() rows of vocab_size() logits.
  Result<std::vector<float>> logits(std::span<const std::int32_t> tokens);

 private:
  struct Impl;
  explicit LlamaModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kotae
