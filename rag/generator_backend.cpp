#include "rag/generator_backend.h"

#include <algorithm>
#include <chrono>

#include "rag/prompt_builder.h"

namespace kotae::rag {

void GeneratorBackend::answer(const AnswerInput& input, AnswerCallbacks callbacks) const {
  const auto start = std::chrono::steady_clock::now();
  auto prompt = build_prompt(*generator_, input.question, input.retrieved, input.history,
                             static_cast<std::size_t>(std::max(input.generation.max_tokens, 1)));
  if (!prompt) return callbacks.done(prompt.error());
  const double prompt_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  callbacks.sources(prompt->sources);
  auto generated = [sources = prompt->sources, prompt_ms, done = std::move(callbacks.done)](Result<Generation> g) {
    if (!g) return done(g.error());
    CitedAnswer cited = resolve_citations(g->text, sources);
    done(BackendAnswer{std::move(cited.text), std::move(cited.citations), true, g->stats, prompt_ms});
  };
  generator_->start(std::move(prompt->messages), input.generation, std::move(callbacks.piece), std::move(generated));
}

}  // namespace kotae::rag
