#pragma once
// A generator as an answer back-end: a prompt of the numbered sources and the conversation, fitted to
// its context (rag/prompt_builder.h), then its answer with the [n] it cites resolved to the sources.

#include <memory>
#include <string>

#include "rag/answerer.h"

namespace kotae::rag {

class GeneratorBackend final : public Answerer {
 public:
  explicit GeneratorBackend(std::shared_ptr<Generator> generator) : generator_(std::move(generator)) {}

  std::string id() const override { return generator_->id(); }
  Generator* generator() const override { return generator_.get(); }
  void answer(const AnswerInput& input, AnswerCallbacks callbacks) const override;

 private:
  std::shared_ptr<Generator> generator_;
};

}  // namespace kotae::rag
