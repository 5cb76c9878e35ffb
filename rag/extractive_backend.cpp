#include "rag/extractive_backend.h"

#include "rag/chunk_embedding.h"

namespace kotae::rag {
namespace {

// Sentence vectors come from the store; chunks stored without them (collections indexed before
// sentences were kept) are pooled now, the same way ingestion does it.
Result<CitedAnswer> extract(const AnswerInput& input, std::span<const Source> sources) {
  std::vector<std::int64_t> ids;
  for (const auto& s : sources) ids.push_back(s.chunk_id);
  auto sentences = KOTAE_TRY_VALUE(input.collection.chunk_sentences(ids));
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!sentences[i].empty()) continue;
    auto pooled = KOTAE_TRY_VALUE(embed_chunks(input.encoder, std::span(&sources[i].text, 1)));
    sentences[i] = std::move(pooled.sentences[0]);
  }
  return extract_answer(input.question, input.question_vector, sources, sentences, input.extractive);
}

}  // namespace

void ExtractiveBackend::answer(const AnswerInput& input, AnswerCallbacks callbacks) const {
  std::vector<Source> numbered(input.retrieved.begin(), input.retrieved.end());
  int next = input.history.next_source_number();
  for (auto& s : numbered) s.number = next++;
  callbacks.sources(numbered);
  auto extracted = extract(input, numbered);
  if (!extracted) return callbacks.done(extracted.error());
  BackendAnswer answer;
  if (extracted->citations.empty()) {
    answer.covered = false;
    answer.text = kNotCovered;
  } else {
    answer.text = std::move(extracted->text);
    answer.citations = std::move(extracted->citations);
  }
  if (callbacks.piece) callbacks.piece(answer.text);
  callbacks.done(std::move(answer));
}

}  // namespace kotae::rag
