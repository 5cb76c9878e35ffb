#pragma once
// The answer pipeline: embed the question, retrieve (hybrid, reranked), check that the documents
// cover it, then answer with the first back-end that can (a local model, an OpenAI-compatible
// server, or extractive sentences), streaming events as it goes: the sources, the answer's pieces,
// the citations, the time each stage took, done. The CLI prints the events; the server will send
// them as Server-Sent Events.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/encoder.h"
#include "model/generator.h"
#include "model/reranker.h"
#include "rag/answerer.h"
#include "rag/citations.h"
#include "rag/extractive_answerer.h"
#include "rag/source.h"
#include "search/hybrid_retriever.h"
#include "store/collection.h"

namespace kotae::rag {

class AnswerCache;

// A back-end, in the order they are tried; one that could not be set up (its model missing) keeps the
// reason, and the next answers in its place.
struct AnswerBackend {
  std::string name = {};                          // "llama.cpp", "openai", "workers", "extractive"
  std::shared_ptr<const Answerer> answerer = {};  // null when it could not be set up
  std::string unavailable = {};
};

AnswerBackend extractive_backend();
AnswerBackend generator_backend(std::string name, std::shared_ptr<Generator> generator);

struct AnswerOptions {
  search::SearchOptions search = [] {
    search::SearchOptions s;
    s.k = 5;
    return s;
  }();
  // Below this cosine similarity between the question and its best source, the documents are taken
  // not to cover the question and no back-end runs. (Fused scores rank but do not measure relevance.)
  double min_relevance = 0.3;
  GenerationOptions generation;  // max_tokens is also the room the prompt leaves for the answer
  ExtractiveOptions extractive;
  // Where a first question (no earlier turns) is answered again from, and a fresh answer kept: `scope`
  // names the collection in its present state ("tenant/name@generation"). Null: no cache.
  AnswerCache* cache = nullptr;
  std::string cache_scope = {};
};

struct StageTimings {  // milliseconds
  double embed = 0, retrieve = 0, rerank = 0, prompt = 0, generate = 0, first_token = 0, total = 0;
};

struct Fallback {
  std::string backend;
  std::string error;
};

struct Answer {
  std::string text;
  std::string backend;  // the back-end that answered; "none" when the documents do not cover the question
  bool covered = true;
  std::vector<Source> sources;  // numbered as the answer cites them
  std::vector<Citation> citations;
  std::vector<Fallback> fallbacks;  // back-ends tried first that failed, and a failed rerank ("rerank")
  StageTimings timings;
  GenerationStats generation;
  std::string cache = "off";  // "hit": from the answer cache; "miss": looked up, answered, kept; "off": not looked up
};

struct AnswerEvent {
  enum class Kind {
    sources,    // answer->sources are set (again, after a restart)
    token,      // a piece of the answer in `token`
    restart,    // a back-end failed after streaming: forget the pieces so far; the next one answers
    citations,  // answer->text is final and answer->citations are set
    timings,    // answer->timings are final
    done,
  };
  Kind kind;
  std::string_view token;
  const Answer* answer = nullptr;
};
// Returning false cancels the answer (the generation stops at the next token).
using AnswerSink = std::function<bool(const AnswerEvent&)>;
// Called exactly once, with the answer or why there is none.
using AnswerDone = std::function<void(Result<Answer>)>;
// Runs work somewhere else than a back-end's thread (the server's work pool).
using Executor = std::function<void(std::function<void()>)>;

class AnswerPipeline {
 public:
  // The encoder must be the collection's embedder; the reranker may be null. All are borrowed.
  AnswerPipeline(const Encoder& encoder, const Reranker* reranker, std::vector<AnswerBackend> backends);

  // A follow-up question passes its conversation, which gains the answered turn. Waits for the answer:
  // ask_async with its stages posted back to the calling thread; `sink` hears the tokens on the
  // generating back-end's thread while the caller waits.
  Result<Answer> ask(std::string_view question, const store::Collection& collection, const AnswerOptions& options,
                     Conversation* conversation = nullptr, const AnswerSink& sink = {}) const;

  // The same without waiting on a model: the stages before generation run on the calling thread, the
  // generation on the back-end's own thread where it has one (a local model's slots), and `sink` and
  // `done` then run there, so they must not block. A back-end that fails hands the question to the
  // next through `post`. The collection, the conversation and what the sink writes to must live until
  // `done`; the pipeline need not.
  void ask_async(std::string question, const store::Collection& collection, AnswerOptions options,
                 Conversation* conversation, AnswerSink sink, AnswerDone done, Executor post) const;

  const std::vector<AnswerBackend>& backends() const { return backends_; }

 private:
  struct Run;

  const Encoder& encoder_;
  const Reranker* reranker_;
  std::vector<AnswerBackend> backends_;
};

}  // namespace kotae::rag
