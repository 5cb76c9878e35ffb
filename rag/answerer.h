#pragma once
// What answers a question from its retrieved sources: the answer pipeline's swappable back-end. A
// generator (a local model, an OpenAI-compatible server, the answer workers) answers through a prompt
// (rag/generator_backend.h); the extractive back-end picks the sources' own sentences
// (rag/extractive_backend.h). The pipeline tries them in order, the same way for each.

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/encoder.h"
#include "model/generator.h"
#include "rag/citations.h"
#include "rag/extractive_answerer.h"
#include "rag/source.h"
#include "store/collection.h"

namespace kotae::rag {

inline constexpr const char* kNotCovered = "The documents in this collection do not cover this question.";

// Everything a back-end may answer from; it lives until the back-end's `done`.
struct AnswerInput {
  std::string_view question;
  std::span<const float> question_vector;
  std::span<const Source> retrieved;  // best first, not yet numbered
  const Conversation& history;
  const store::Collection& collection;
  const Encoder& encoder;  // the collection's embedder
  const GenerationOptions& generation;
  const ExtractiveOptions& extractive;
};

struct BackendAnswer {
  std::string text;
  std::vector<Citation> citations;
  bool covered = true;         // false: the back-end found nothing in the sources to answer with
  GenerationStats generation;  // a generator's
  double prompt_ms = 0;        // spent building its prompt
};

// In the order they come: sources once (the sources as the answer numbers them), pieces, then done.
struct AnswerCallbacks {
  std::function<void(std::vector<Source> numbered)> sources;
  TokenCallback piece;  // false cancels
  std::function<void(Result<BackendAnswer>)> done;
};

class Answerer {
 public:
  virtual ~Answerer() = default;
  // Names it and its model, e.g. "llama.cpp:SmolLM2 135M Instruct" or "extractive"; part of the answer cache's key.
  virtual std::string id() const = 0;
  // The chat model behind it, for plain chat; null for one without (extractive).
  virtual Generator* generator() const { return nullptr; }
  virtual void answer(const AnswerInput& input, AnswerCallbacks callbacks) const = 0;
};

}  // namespace kotae::rag
