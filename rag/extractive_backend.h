#pragma once
// The extractive answerer (rag/extractive_answerer.h) as an answer back-end: the retrieved sources
// numbered in rank order, their sentences' vectors read from the store (or pooled now for chunks
// stored without them), and the picked sentences as the answer.

#include <string>

#include "rag/answerer.h"

namespace kotae::rag {

class ExtractiveBackend final : public Answerer {
 public:
  std::string id() const override { return "extractive"; }
  void answer(const AnswerInput& input, AnswerCallbacks callbacks) const override;
};

}  // namespace kotae::rag
