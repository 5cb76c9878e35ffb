#pragma once
// A model on the GPU with its CPU twin behind it. A GPU can fail after it loaded (a lost device, an
// illegal address, memory taken by another process): the first such error sends that call, and every
// later one, to the same model on ONNX Runtime, loaded then, with one log line (`gpu_failed_over`)
// and one report to `on_failure` (the server counts it). Requests are never failed for it. Only the
// GPU's run errors (ErrorCode::model) switch; an input the GPU does not support does not. Both
// engines tokenise alike (same tokenizer and limits), so an encoding made for one reads the same on
// the other, and the GPU model is kept, so references to its tokenizer stay valid.

#include <functional>
#include <memory>
#include <string>

#include "model/encoder.h"
#include "model/reranker.h"

namespace kotae {

struct GpuFailure {
  std::string model;     // the model's id
  std::string from, to;  // providers: the GPU's, then the CPU's
  std::string reason;    // the GPU's error
};
using OnGpuFailure = std::function<void(const GpuFailure&)>;

std::unique_ptr<Encoder> with_cpu_failover(std::unique_ptr<Encoder> gpu,
                                           std::function<Result<std::unique_ptr<Encoder>>()> load_cpu,
                                           OnGpuFailure on_failure = {});
std::unique_ptr<PairScorer> with_cpu_failover(std::unique_ptr<PairScorer> gpu,
                                              std::function<Result<std::unique_ptr<PairScorer>>()> load_cpu,
                                              OnGpuFailure on_failure = {});

}  // namespace kotae
