#include "rag/answer_pipeline.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "model/encoder.h"
#include "rag/answer_cache.h"
#include "rag/extractive_backend.h"
#include "rag/generator_backend.h"

namespace kotae::rag {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Source to_source(const search::SearchHit& hit, double relevance) {
  Source s;
  s.chunk_id = hit.chunk.id;
  s.document_id = hit.chunk.document_id;
  s.document = hit.document_path;
  s.title = hit.document_title;
  s.format = hit.document_format;
  s.metadata_json = hit.document_metadata_json;
  s.page_first = hit.chunk.page_first;
  s.page_last = hit.chunk.page_last;
  s.begin = hit.chunk.begin;
  s.end = hit.chunk.end;
  s.heading_path = hit.chunk.heading_path;
  s.table = hit.chunk.table;
  s.row_first = hit.chunk.row_first;
  s.row_last = hit.chunk.row_last;
  s.boxes = hit.chunk.boxes;
  s.text = hit.chunk.text;
  s.relevance = relevance;
  s.score = hit.score;
  return s;
}

}  // namespace

AnswerBackend extractive_backend() {
  return {"extractive", std::make_shared<ExtractiveBackend>()};
}

AnswerBackend generator_backend(std::string name, std::shared_ptr<Generator> generator) {
  return {std::move(name), std::make_shared<GeneratorBackend>(std::move(generator))};
}

AnswerPipeline::AnswerPipeline(const Encoder& encoder, const Reranker* reranker, std::vector<AnswerBackend> backends)
    : encoder_(encoder), reranker_(reranker), backends_(std::move(backends)) {}

// One question on its way through the stages. The stages before generation run on the caller's thread;
// generation, on a back-end's own thread where it has one. Each model's answer comes back on the
// model's thread, and the next stage goes through `post`; a back-end that fails hands the question to
// the next the same way.
struct AnswerPipeline::Run : std::enable_shared_from_this<AnswerPipeline::Run> {
  const Encoder& encoder;
  const Reranker* reranker;
  std::vector<AnswerBackend> backends;
  std::string question;
  const store::Collection& collection;
  AnswerOptions options;
  Conversation* conversation;
  Conversation no_history;
  AnswerSink sink;
  AnswerDone done;
  Executor post;

  Clock::time_point start = Clock::now();
  Answer answer;
  std::vector<float> question_vector;
  std::vector<Source> retrieved;
  std::optional<AnswerInput> input;  // what the back-ends answer from, once retrieved
  std::string cache_key;
  bool streamed = false;

  Run(const AnswerPipeline& pipeline, std::string q, const store::Collection& c, AnswerOptions o, Conversation* history)
      : encoder(pipeline.encoder_),
        reranker(pipeline.reranker_),
        backends(pipeline.backends_),
        question(std::move(q)),
        collection(c),
        options(std::move(o)),
        conversation(history) {}

  const Conversation& history() const { return conversation ? *conversation : no_history; }
  bool send(AnswerEvent::Kind kind, std::string_view token = {}) {
    return !sink || sink(AnswerEvent{kind, token, &answer});
  }

  void number_in_rank_order() {
    answer.sources = retrieved;
    int next = history().next_source_number();
    for (auto& s : answer.sources) s.number = next++;
  }

  // Embed once: the vector serves retrieval, the relevance check and the extractive back-end. Then
  // retrieve (and rerank) and go on to the back-ends.
  void begin() {
    if (question.find_first_not_of(" \t\r\n") == std::string::npos) {
      return done(make_error(ErrorCode::invalid_argument, "the question is empty"));
    }
    if (options.cache && history().turns.empty() && answer_from_cache()) return;
    auto self = shared_from_this();
    auto embedded = [self, embed_start = Clock::now()](Result<Embeddings> vector) {
      self->answer.timings.embed = ms_since(embed_start);
      self->post([self, vector = std::move(vector)] {
        if (!vector) return self->done(vector.error());
        self->question_vector = vector->row_copy(0);
        self->retrieve();
      });
    };
    encoder.embed_encoded_async({encoder.tokenize_as(TextRole::query, question)}, std::move(embedded));
  }

  void retrieve() {
    const auto retrieve_start = Clock::now();
    auto retriever = search::HybridRetriever::create(collection, &encoder, reranker);
    if (!retriever) return done(retriever.error());
    auto lists = retriever->retrieve(question, question_vector, options.search);
    if (!lists) return done(lists.error());
    auto fused = retriever->fuse(std::move(*lists), options.search);
    if (!fused) return done(fused.error());
    answer.timings.retrieve = ms_since(retrieve_start);
    if (!retriever->reranks(options.search) || fused->hits.empty()) return answer_from(std::move(fused->hits));

    auto self = shared_from_this();
    auto hits = std::make_shared<search::SearchResult>(std::move(*fused));
    auto reranked = [self, hits, rerank_start = Clock::now()](Result<std::vector<float>> scores) {
      self->answer.timings.rerank = ms_since(rerank_start);
      self->post([self, hits, scores = std::move(scores)] {
        // A failed rerank leaves the fused order; the answer goes on and names it in its fallbacks
        // (which also keeps it out of the answer cache).
        if (scores) {
          search::HybridRetriever::rerank_by(*hits, *scores, self->options.search);
        } else {
          search::HybridRetriever::skip_rerank(*hits, scores.error(), self->options.search);
          self->answer.fallbacks.push_back({"rerank", scores.error().message});
        }
        self->answer_from(std::move(hits->hits));
      });
    };
    auto passages = search::HybridRetriever::rerank_passages(*hits, options.search);
    reranker->score_async(question, std::move(passages), std::move(reranked));
  }

  // The sources' relevance decides whether the documents cover the question.
  void answer_from(std::vector<search::SearchHit> hits) {
    std::vector<std::int64_t> ids;
    for (const auto& hit : hits) ids.push_back(hit.chunk.id);
    auto vectors = collection.embeddings(ids);
    if (!vectors) return done(vectors.error());
    double best_relevance = -1;
    const std::size_t dimension = question_vector.size();
    for (std::size_t i = 0; i < hits.size(); ++i) {
      const double relevance = dot(question_vector, std::span<const float>(vectors->data() + i * dimension, dimension));
      retrieved.push_back(to_source(hits[i], relevance));
      best_relevance = std::max(best_relevance, relevance);
    }
    if (retrieved.empty() || best_relevance < options.min_relevance) {
      number_in_rank_order();
      not_covered();
      send(AnswerEvent::Kind::sources);
      send(AnswerEvent::Kind::token, answer.text);
      return finish();
    }
    try_backends(0);
  }

  // A first question asked before, answered the same events from the cache.
  bool answer_from_cache() {
    cache_key = answer_cache_key(options.cache_scope, question, options, backends);
    auto cached = options.cache->find(cache_key);
    answer.cache = cached ? "hit" : "miss";
    if (!cached) return false;
    answer = std::move(*cached);
    answer.cache = "hit";
    send(AnswerEvent::Kind::sources);
    send(AnswerEvent::Kind::token, answer.text);
    finish();
    return true;
  }

  void finish() {
    // Kept unless a failing back-end degraded it or it was cut short.
    if (answer.cache == "miss" && answer.fallbacks.empty() && answer.generation.finish_reason != "cancelled") {
      options.cache->put(cache_key, answer);
    }
    if (answer.cache != "hit") answer.timings.total = ms_since(start);
    send(AnswerEvent::Kind::citations);
    send(AnswerEvent::Kind::timings);
    send(AnswerEvent::Kind::done);
    if (conversation && answer.covered) {
      std::vector<Source> shown;  // sources first shown in this turn
      for (const auto& s : answer.sources) {
        if (s.number >= history().next_source_number()) shown.push_back(s);
      }
      conversation->turns.push_back({question, answer.text, std::move(shown)});
    }
    done(std::move(answer));
  }

  void not_covered() {
    answer.covered = false;
    answer.backend = "none";
    answer.text = kNotCovered;
  }

  // Tries the back-ends from `at` on until one answers (or is under way on its own thread).
  void try_backends(std::size_t at) {
    for (; at < backends.size() && !backends[at].answerer; ++at) {
      answer.fallbacks.push_back({backends[at].name, backends[at].unavailable});
    }
    if (at == backends.size()) {
      std::string reasons;
      for (const auto& f : answer.fallbacks) reasons += (reasons.empty() ? "" : "; ") + f.backend + ": " + f.error;
      return done(make_error(ErrorCode::unsupported,
                             "no back-end could answer (" + (reasons.empty() ? "none configured" : reasons) + ")"));
    }
    if (streamed) {
      send(AnswerEvent::Kind::restart);
      streamed = false;
    }
    if (!input) {
      input.emplace(AnswerInput{question, question_vector, retrieved, history(), collection, encoder,
                                options.generation, options.extractive});
    }
    auto self = shared_from_this();
    AnswerCallbacks callbacks;
    callbacks.sources = [self](std::vector<Source> numbered) {
      self->answer.sources = std::move(numbered);
      self->send(AnswerEvent::Kind::sources);
    };
    callbacks.piece = [self](std::string_view piece) {
      if (!self->streamed) self->answer.timings.first_token = ms_since(self->start);
      self->streamed = true;
      return self->send(AnswerEvent::Kind::token, piece);
    };
    callbacks.done = [self, at, backend_start = Clock::now()](Result<BackendAnswer> answered) {
      auto& a = self->answer;
      if (!answered) {
        // A busy model is not a broken one: the client is told to retry rather than given a lesser answer.
        if (answered.error().code == ErrorCode::overloaded) return self->done(answered.error());
        a.fallbacks.push_back({self->backends[at].name, answered.error().message});
        return self->post([self, at] { self->try_backends(at + 1); });
      }
      a.timings.prompt = answered->prompt_ms;
      a.timings.generate = ms_since(backend_start) - answered->prompt_ms;
      a.generation = std::move(answered->generation);
      if (!answered->covered) {
        self->not_covered();
      } else {
        a.backend = self->backends[at].name;
        a.text = std::move(answered->text);
        a.citations = std::move(answered->citations);
      }
      self->finish();
    };
    backends[at].answerer->answer(*input, std::move(callbacks));
  }
};

Result<Answer> AnswerPipeline::ask(std::string_view question, const store::Collection& collection,
                                   const AnswerOptions& options, Conversation* conversation,
                                   const AnswerSink& sink) const {
  // The asynchronous pipeline, its stages posted back to this thread, which runs them until the answer
  // is done. Shared, since a model's thread may still be leaving a callback when this returns.
  struct Waiting {
    std::mutex mutex;
    std::condition_variable woken;
    std::deque<std::function<void()>> stages;
    std::optional<Result<Answer>> result;
  };
  auto waiting = std::make_shared<Waiting>();
  auto post = [waiting](std::function<void()> stage) {
    std::lock_guard lock(waiting->mutex);
    waiting->stages.push_back(std::move(stage));
    waiting->woken.notify_one();
  };
  auto done = [waiting](Result<Answer> answer) {
    std::lock_guard lock(waiting->mutex);
    waiting->result.emplace(std::move(answer));
    waiting->woken.notify_one();
  };
  ask_async(std::string(question), collection, options, conversation, sink, std::move(done), std::move(post));
  std::unique_lock lock(waiting->mutex);
  for (;;) {
    waiting->woken.wait(lock, [&] { return waiting->result.has_value() || !waiting->stages.empty(); });
    if (waiting->stages.empty()) break;
    auto stage = std::move(waiting->stages.front());
    waiting->stages.pop_front();
    lock.unlock();
    stage();
    lock.lock();
  }
  return std::move(*waiting->result);
}

void AnswerPipeline::ask_async(std::string question, const store::Collection& collection, AnswerOptions options,
                               Conversation* conversation, AnswerSink sink, AnswerDone done, Executor post) const {
  auto run = std::make_shared<Run>(*this, std::move(question), collection, std::move(options), conversation);
  run->sink = std::move(sink);
  run->done = std::move(done);
  run->post = std::move(post);
  run->begin();
}

}  // namespace kotae::rag
