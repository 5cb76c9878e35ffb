#include "rag/answer_pipeline.h"

#include <algorithm>
#include <chrono>

#include "rag/chunk_embedding.h"
#include "rag/prompt_builder.h"

namespace kotae::rag {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

float dot(std::span<const float> a, std::span<const float> b) {
  float sum = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) sum += a[i] * b[i];
  return sum;
}

Source to_source(const search::SearchHit& hit, double relevance) {
  Source s;
  s.chunk_id = hit.chunk.id;
  s.document = hit.document_path;
  s.title = hit.document_title;
  s.page_first = hit.chunk.page_first;
  s.page_last = hit.chunk.page_last;
  s.begin = hit.chunk.begin;
  s.end = hit.chunk.end;
  s.heading_path = hit.chunk.heading_path;
  s.text = hit.chunk.text;
  s.relevance = relevance;
  s.score = hit.score;
  return s;
}

}  // namespace

AnswerPipeline::AnswerPipeline(const Encoder& encoder, const Reranker* reranker, std::vector<AnswerBackend> backends)
    : encoder_(encoder), reranker_(reranker), backends_(std::move(backends)) {}

// Sentence vectors come from the store; chunks stored without them (collections indexed before
// sentences were kept) are pooled now, the same way ingestion does it.
Result<CitedAnswer> AnswerPipeline::extract(std::span<const float> question, const store::Collection& collection,
                                            std::span<const Source> sources, const ExtractiveOptions& options) const {
  std::vector<std::int64_t> ids;
  for (const auto& s : sources) ids.push_back(s.chunk_id);
  auto sentences = collection.chunk_sentences(ids);
  if (!sentences) return sentences.error();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!(*sentences)[i].empty()) continue;
    auto pooled = embed_chunks(encoder_, std::span(&sources[i].text, 1));
    if (!pooled) return pooled.error();
    (*sentences)[i] = std::move(pooled->sentences[0]);
  }
  return extract_answer(question, sources, *sentences, options);
}

Result<Answer> AnswerPipeline::ask(std::string_view question, const store::Collection& collection,
                                   const AnswerOptions& options, Conversation* conversation, const AnswerSink& sink) const {
  const auto start = Clock::now();
  if (question.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument, "the question is empty");
  }
  Answer answer;
  auto send = [&](AnswerEvent::Kind kind, std::string_view token = {}) {
    return !sink || sink(AnswerEvent{kind, token, &answer});
  };

  // Embed once: the vector serves retrieval, the relevance check and the extractive back-end.
  auto retriever = search::HybridRetriever::create(collection, &encoder_, reranker_);
  if (!retriever) return retriever.error();
  const auto embed_start = Clock::now();
  const std::string question_text(question);
  auto embedded = encoder_.embed(std::span(&question_text, 1));
  if (!embedded) return embedded.error();
  const std::vector<float> question_vector = embedded->row_copy(0);
  answer.timings.embed = ms_since(embed_start);

  auto found = retriever->search_embedded(question, question_vector, options.search);
  if (!found) return found.error();
  answer.timings.rerank = found->timing.rerank;
  answer.timings.retrieve = found->timing.total - found->timing.rerank;

  std::vector<std::int64_t> ids;
  for (const auto& hit : found->hits) ids.push_back(hit.chunk.id);
  auto vectors = collection.embeddings(ids);
  if (!vectors) return vectors.error();
  std::vector<Source> retrieved;
  double best_relevance = -1;
  const std::size_t dimension = question_vector.size();
  for (std::size_t i = 0; i < found->hits.size(); ++i) {
    const double relevance = dot(question_vector, std::span<const float>(vectors->data() + i * dimension, dimension));
    retrieved.push_back(to_source(found->hits[i], relevance));
    best_relevance = std::max(best_relevance, relevance);
  }
  Conversation no_history;
  const Conversation& history = conversation ? *conversation : no_history;
  auto number_in_rank_order = [&] {
    answer.sources = retrieved;
    int next = history.next_source_number();
    for (auto& s : answer.sources) s.number = next++;
  };

  auto finish = [&]() -> Result<Answer> {
    answer.timings.total = ms_since(start);
    send(AnswerEvent::Kind::citations);
    send(AnswerEvent::Kind::timings);
    send(AnswerEvent::Kind::done);
    if (conversation && answer.covered) {
      std::vector<Source> shown;  // sources first shown in this turn
      for (const auto& s : answer.sources) {
        if (s.number >= history.next_source_number()) shown.push_back(s);
      }
      conversation->turns.push_back({question_text, answer.text, std::move(shown)});
    }
    return std::move(answer);
  };

  if (retrieved.empty() || best_relevance < options.min_relevance) {
    number_in_rank_order();
    answer.covered = false;
    answer.backend = "none";
    answer.text = kNotCovered;
    send(AnswerEvent::Kind::sources);
    send(AnswerEvent::Kind::token, answer.text);
    return finish();
  }

  bool streamed = false;
  for (const auto& backend : backends_) {
    if (!backend.unavailable.empty()) {
      answer.fallbacks.push_back({backend.name, backend.unavailable});
      continue;
    }
    if (streamed) {
      send(AnswerEvent::Kind::restart);
      streamed = false;
    }
    const auto stage_start = Clock::now();
    if (!backend.generator) {  // extractive
      number_in_rank_order();
      send(AnswerEvent::Kind::sources);
      auto extracted = extract(question_vector, collection, answer.sources, options.extractive);
      if (!extracted) {
        answer.fallbacks.push_back({backend.name, extracted.error().message});
        continue;
      }
      answer.timings.generate = ms_since(stage_start);
      if (extracted->citations.empty()) {
        answer.covered = false;
        answer.backend = "none";
        answer.text = kNotCovered;
      } else {
        answer.backend = backend.name;
        answer.text = std::move(extracted->text);
        answer.citations = std::move(extracted->citations);
      }
      answer.timings.first_token = ms_since(start);
      send(AnswerEvent::Kind::token, answer.text);
      return finish();
    }

    auto prompt = build_prompt(*backend.generator, question, retrieved, history,
                               static_cast<std::size_t>(std::max(options.generation.max_tokens, 1)));
    if (!prompt) {
      answer.fallbacks.push_back({backend.name, prompt.error().message});
      continue;
    }
    answer.sources = prompt->sources;
    answer.timings.prompt = ms_since(stage_start);
    send(AnswerEvent::Kind::sources);
    const auto generate_start = Clock::now();
    bool first = true;
    auto generated = backend.generator->generate(prompt->messages, options.generation, [&](std::string_view piece) {
      if (first) {
        answer.timings.first_token = ms_since(start);
        first = false;
      }
      streamed = true;
      return send(AnswerEvent::Kind::token, piece);
    });
    if (!generated) {
      // A busy model is not a broken one: the client is told to retry rather than given a lesser answer.
      if (generated.error().code == ErrorCode::overloaded) return generated.error();
      answer.fallbacks.push_back({backend.name, generated.error().message});
      continue;
    }
    answer.timings.generate = ms_since(generate_start);
    answer.generation = generated->stats;
    answer.backend = backend.name;
    CitedAnswer cited = resolve_citations(generated->text, prompt->sources);
    answer.text = std::move(cited.text);
    answer.citations = std::move(cited.citations);
    return finish();
  }

  std::string reasons;
  for (const auto& f : answer.fallbacks) reasons += (reasons.empty() ? "" : "; ") + f.backend + ": " + f.error;
  return make_error(ErrorCode::unsupported, "no back-end could answer (" + (reasons.empty() ? "none configured" : reasons) + ")");
}

}  // namespace kotae::rag
