#pragma once
// One ONNX Runtime inference session. The only header that knows ONNX Runtime exists is its .cpp:
// callers see names, options and float/int64 tensors.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/result.h"

namespace kotae {

enum class GraphOptimization { none, basic, extended, all };

struct OnnxSessionOptions {
  GraphOptimization optimization = GraphOptimization::all;
  int intra_op_threads = 0;  // 0: ONNX Runtime's choice (one per physical core)
  int inter_op_threads = 1;
  bool memory_pattern = true;
  bool cpu_arena = true;
  bool deterministic = false;
  // Intra-op threads busy-wait between operators. Fastest for back-to-back runs; a server with idle
  // gaps between batches turns it off so the waiting does not steal cores from HTTP and tokenising.
  bool allow_spinning = true;
  // Execution providers in priority order ("tensorrt", "cuda", "cpu"); each unavailable one is skipped
  // with one log line and the next is tried. CPU is always the last resort.
  std::vector<std::string> providers = {"cpu"};
  // Where GPU provider plugin libraries (libonnxruntime_providers_cuda.so, ...) are looked for;
  // empty: $KOTAE_ORT_PROVIDER_DIR, else next to ONNX Runtime itself.
  std::string provider_dir;
};

// An int64 input tensor of shape {rows, cols}.
struct Int64Input {
  std::string name;
  const std::int64_t* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// A float output tensor, borrowed from ONNX Runtime for the duration of a callback (no copy).
struct FloatTensorView {
  const float* data = nullptr;
  std::vector<std::int64_t> shape;
};

class OnnxSession {
 public:
  static Result<std::unique_ptr<OnnxSession>> open(const std::filesystem::path& model,
                                                   const OnnxSessionOptions& options);
  ~OnnxSession();
  OnnxSession(const OnnxSession&) = delete;
  OnnxSession& operator=(const OnnxSession&) = delete;

  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  bool has_input(const std::string& name) const;
  // The provider that runs the session ("CPUExecutionProvider", ...), and why others were skipped.
  const std::string& provider() const;
  const std::vector<std::string>& skipped_providers() const;

  // Runs the model and hands the named output to `consume` while it is still alive. Safe to call
  // from several threads at once (ONNX Runtime sessions are).
  template <class Consume>
  Result<void> run(const std::vector<Int64Input>& inputs, const std::string& output, Consume&& consume) const {
    using Fn = std::remove_reference_t<Consume>;
    return run_erased(
        inputs, output, [](const FloatTensorView& view, void* state) { (*static_cast<Fn*>(state))(view); }, &consume);
  }

  // Static shape of a declared output; -1 marks a dynamic axis. Empty when the output is unknown.
  std::vector<std::int64_t> output_shape(const std::string& output) const;

 private:
  struct Impl;
  explicit OnnxSession(std::unique_ptr<Impl> impl);
  Result<void> run_erased(const std::vector<Int64Input>& inputs, const std::string& output,
                          void (*consume)(const FloatTensorView&, void*), void* state) const;
  std::unique_ptr<Impl> impl_;
};

std::string onnxruntime_version();
std::vector<std::string> onnxruntime_providers();  // compiled into the loaded library

}  // namespace kotae
