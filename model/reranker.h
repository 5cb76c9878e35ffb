#pragma once
// What the rest of Kotae sees of a reranker: a query and its candidate passages in, one relevance
// score per passage out, in the passages' order (higher = more relevant). Scores rank the passages of
// one query; their scale is the scorer's own (raw logits, cosines), so never compare or threshold
// them across scorers.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kotae {

class Reranker {
 public:
  virtual ~Reranker() = default;

  // One score per passage; an empty list gives an empty result without running a model.
  virtual Result<std::vector<float>> score(std::string_view query, std::span<const std::string> passages) const = 0;
  // Names the scorer and its model, e.g. "ms-marco-minilm-l6/fp32"; pipelines log and A/B by it.
  virtual std::string id() const = 0;
};

}  // namespace kotae
