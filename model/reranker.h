#pragma once
// What the rest of Kotae sees of a reranker: a query and its candidate passages in, one relevance
// score per passage out, in the passages' order (higher = more relevant). Scores rank the passages of
// one query; their scale is the scorer's own (raw logits, cosines), so never compare or threshold
// them across scorers.

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

class Reranker {
 public:
  virtual ~Reranker() = default;

  // One score per passage; an empty list gives an empty result without running a model.
  virtual Result<std::vector<float>> score(std::string_view query, std::span<const std::string> passages) const = 0;
  // Names the scorer and its model, e.g. "ms-marco-minilm-l6/fp32"; pipelines log and A/B by it.
  virtual std::string id() const = 0;

  // score without waiting, where the scorer has a thread of its own (the dynamic batcher's): `done`
  // then runs on that thread, so it must not block. A scorer without one answers before returning.
  using ScoresDone = std::function<void(Result<std::vector<float>>)>;
  virtual void score_async(std::string query, std::vector<std::string> passages, ScoresDone done) const {
    done(score(query, passages));
  }
  // The longest pair the model reads, and a pair's tokens before it is cut to that (TEI refuses a
  // longer one unless told to truncate); 0 where the scorer cannot say.
  virtual std::size_t max_pair_tokens() const { return 0; }
  virtual std::size_t untruncated_pair_tokens(std::string_view /*query*/, std::string_view /*passage*/) const {
    return 0;
  }
};

// A cross-encoder: each (query, passage) pair is encoded as the model reads it, and encoded pairs are
// scored in batches, so a batcher can score the pairs of concurrent requests together. On ONNX Runtime
// (CrossEncoder) or on the native CUDA kernels (CudaCrossEncoder).
class PairScorer : public Reranker {
 public:
  virtual text::Encoding encode(std::string_view query, std::string_view passage) const = 0;
  // Scores pairs encoded by encode(), in their order.
  virtual Result<std::vector<float>> score_encoded(std::span<const text::Encoding> pairs) const = 0;
  // Where it runs, e.g. "CPUExecutionProvider" or "KotaeCUDA (NVIDIA H200)".
  virtual const std::string& provider() const = 0;

  Result<std::vector<float>> score(std::string_view query, std::span<const std::string> passages) const override {
    std::vector<text::Encoding> pairs;
    pairs.reserve(passages.size());
    for (const auto& passage : passages) pairs.push_back(encode(query, passage));
    return score_encoded(pairs);
  }
};

}  // namespace kotae
