// Generation through Kotae, for bench/generate to set beside llama.cpp's own llama-bench:
//   prompt_processing  a prompt of --prompt-tokens decoded from an empty cache (tokens/s)
//   generation         --gen-tokens generated one by one (tokens/s; the end of turn is ignored, as
//                      llama-bench does)
//   follow_up_ttft     time to first token of a follow-up turn whose sources were already shown,
//                      with the conversation's KV cache kept and with it dropped
//   extractive_answer  the extractive back-end over each question's retrieved chunks (its stage
//                      alone, and the whole answer), p50/p99
// Prints one JSON object per case.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "model/llama_generator.h"
#include "model/sentence_encoder.h"
#include "rag/answer_pipeline.h"
#include "rag/prompt_builder.h"
#include "store/collection.h"

namespace {

using namespace kotae;
namespace fs = std::filesystem;

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(p * double(v.size()))) - 1)];
}

[[noreturn]] void die(const std::string& message) {
  std::cerr << "kotae-bench-generate: " << message << "\n";
  std::exit(2);
}

template <class T>
T check(Result<T> result, const char* what) {
  if (!result) die(std::string(what) + ": " + result.error().message);
  return std::move(*result);
}

// A user message whose chat-formatted prompt is exactly `tokens` long (or just under).
std::vector<ChatMessage> prompt_of(const LlamaGenerator& generator, std::size_t tokens, const std::string& text) {
  std::string body;
  auto size = [&] {
    const std::vector<ChatMessage> m = {{"user", body}};
    return generator.tokenize(*generator.format_chat(m), true).size();
  };
  for (std::size_t at = 0; size() < tokens; at = (at + 400) % text.size()) body += text.substr(at, 400);
  while (size() > tokens) body.resize(body.size() - 1);
  return {{"user", body}};
}

nlohmann::json rates(const std::string& name, std::vector<double> per_second, std::size_t tokens) {
  return {{"name", name}, {"tokens", tokens}, {"repetitions", per_second.size()},
          {"tokens_per_s", percentile(per_second, 0.5)},
          {"min_tokens_per_s", *std::min_element(per_second.begin(), per_second.end())},
          {"max_tokens_per_s", *std::max_element(per_second.begin(), per_second.end())}};
}

// Speed: the same runs llama-bench makes (a prompt from an empty cache; tokens one at a time), in a
// context sized as llama-bench sizes its own (attention reads the whole cache in use).
void speed_cases(const fs::path& gguf, int threads, int repetitions, std::size_t prompt_tokens, std::size_t gen_tokens,
                 const std::string& corpus) {
  LlamaGeneratorOptions options;
  options.threads = threads;
  options.context_length = static_cast<int>(prompt_tokens + gen_tokens + 64);
  options.batch = static_cast<int>(std::max<std::size_t>(512, prompt_tokens));
  auto generator = check(LlamaGenerator::load(gguf, options), "model");
  const auto prompt = prompt_of(*generator, prompt_tokens, corpus);
  std::vector<double> pp, tg;
  check(generator->generate(prompt, {.max_tokens = 8, .temperature = 0.0f}), "warm-up");
  for (int r = 0; r < repetitions; ++r) {
    generator->reset_cache();
    auto run = check(generator->generate(prompt, {.max_tokens = 1, .temperature = 0.0f}), "prompt processing");
    pp.push_back(double(run.stats.prompt_tokens) / (run.stats.prompt_ms / 1000.0));
  }
  std::cout << rates("prompt_processing", pp, prompt_tokens).dump() << std::endl;
  const std::vector<ChatMessage> short_prompt = {{"user", "Tell me about Debian."}};
  for (int r = 0; r < repetitions; ++r) {
    GenerationOptions sampling{.max_tokens = static_cast<int>(gen_tokens) + 1, .temperature = 0.0f};
    sampling.ignore_end_of_turn = true;
    auto run = check(generator->generate(short_prompt, sampling), "generation");
    // The first token comes with the prompt; the rest are decoded one at a time.
    tg.push_back(double(run.stats.generated_tokens - 1) / (run.stats.generation_ms / 1000.0));
  }
  std::cout << rates("generation", tg, gen_tokens).dump() << std::endl;
}

void answer_cases(const fs::path& gguf, int threads, int repetitions, store::Collection& collection,
                  const fs::path& model_dir, const fs::path& queries_file, std::size_t max_queries) {
  auto encoder = check(SentenceEncoder::load(model_dir), "embedding model");
  LlamaGeneratorOptions options;
  options.threads = threads;
  // Follow-up time to first token: a conversation whose second question finds the sources of the
  // first (the common case: a follow-up on the same topic), with the KV cache kept and dropped.
  {
    options.context_length = 4096;
    auto generator = check(LlamaGenerator::load(gguf, options), "model");
    auto retriever = check(search::HybridRetriever::create(collection, encoder.get()), "retriever");
    search::SearchOptions search;
    search.k = 5;
    auto found = check(retriever.search("How do I upgrade Debian to the next release?", search), "search");
    std::vector<rag::Source> sources;
    for (const auto& hit : found.hits) {
      rag::Source s;
      s.chunk_id = hit.chunk.id;
      s.document = hit.document_path;
      s.title = hit.document_title;
      s.text = hit.chunk.text;
      sources.push_back(std::move(s));
    }
    rag::Conversation conversation;
    auto first = check(rag::build_prompt(*generator, "How do I upgrade Debian to the next release?", sources, conversation, 256),
                       "first prompt");
    conversation.turns.push_back({"How do I upgrade Debian to the next release?",
                                  "Read the release notes, then upgrade with apt full-upgrade [1].", first.new_sources});
    auto second = check(rag::build_prompt(*generator, "Should I read anything before I start?", sources, conversation, 256),
                        "follow-up prompt");
    std::vector<double> with_reuse, without_reuse;
    std::size_t reused = 0, total = 0;
    for (int r = 0; r < repetitions; ++r) {
      generator->reset_cache();
      check(generator->generate(first.messages, {.max_tokens = 1, .temperature = 0.0f}), "first turn");
      auto kept = check(generator->generate(second.messages, {.max_tokens = 1, .temperature = 0.0f}), "follow-up");
      with_reuse.push_back(kept.stats.prompt_ms);
      reused = kept.stats.reused_prompt_tokens;
      total = kept.stats.prompt_tokens;
      generator->reset_cache();
      auto fresh = check(generator->generate(second.messages, {.max_tokens = 1, .temperature = 0.0f}), "follow-up");
      without_reuse.push_back(fresh.stats.prompt_ms);
    }
    const double kept_ms = percentile(with_reuse, 0.5), fresh_ms = percentile(without_reuse, 0.5);
    std::cout << nlohmann::json{{"name", "follow_up_ttft"},          {"prompt_tokens", total},
                                {"reused_prompt_tokens", reused},     {"with_reuse_ms", kept_ms},
                                {"without_reuse_ms", fresh_ms},       {"ratio", kept_ms / fresh_ms}}
                     .dump()
              << std::endl;
  }

  // Extractive answers: real questions, the default options (hybrid retrieval, 5 sources).
  {
    rag::AnswerPipeline pipeline(*encoder, nullptr, {{"extractive"}});
    std::ifstream in(queries_file);
    std::vector<double> stage, whole;
    std::size_t answered = 0, questions = 0;
    for (std::string line; std::getline(in, line) && questions < max_queries;) {
      const auto question = nlohmann::json::parse(line)["text"].get<std::string>();
      auto answer = check(pipeline.ask(question, collection, {}), "extractive answer");
      ++questions;
      if (answer.backend != "extractive") continue;  // not covered: nothing extracted
      ++answered;
      stage.push_back(answer.timings.generate);
      whole.push_back(answer.timings.total);
    }
    std::cout << nlohmann::json{{"name", "extractive_answer"},
                                {"questions", questions},
                                {"answered", answered},
                                {"p50_ms", percentile(stage, 0.5)},
                                {"p99_ms", percentile(stage, 0.99)},
                                {"answer_p50_ms", percentile(whole, 0.5)},
                                {"answer_p99_ms", percentile(whole, 0.99)}}
                     .dump()
              << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"generation speed, follow-up time to first token, extractive latency"};
  fs::path gguf, collection_dir, model_dir, queries_file;
  int threads = 2, repetitions = 3;
  std::size_t prompt_tokens = 512, gen_tokens = 128, max_queries = 200;
  std::vector<std::string> cases = {"speed", "answers"};
  app.add_option("--model", gguf, "GGUF model")->required();
  app.add_option("--collection", collection_dir, "an indexed collection (the Debian FAQ)")->required();
  app.add_option("--embedder", model_dir, "the collection's embedding model folder")->required();
  app.add_option("--queries", queries_file, "BEIR queries.jsonl: questions for the extractive case")->required();
  app.add_option("--threads", threads, "generation threads");
  app.add_option("--repetitions", repetitions, "runs per generation case");
  app.add_option("--prompt-tokens", prompt_tokens, "prompt length for prompt processing");
  app.add_option("--gen-tokens", gen_tokens, "tokens to generate");
  app.add_option("--max-queries", max_queries, "questions for the extractive case");
  app.add_option("--cases", cases, "speed (prompt processing, generation), answers (follow-up, extractive)")
      ->delimiter(',')
      ->check(CLI::IsMember({"speed", "answers"}));
  CLI11_PARSE(app, argc, argv);

  auto collection = check(store::Collection::open(collection_dir), "collection");
  std::string corpus;  // real text for prompts
  for (const auto& d : check(collection->documents(), "documents")) {
    corpus += check(collection->document(d.id), "document")->text;
    if (corpus.size() > 200000) break;
  }

  // Generation speed first, alone: ONNX Runtime's threads must not share the cores meanwhile.
  const auto wants = [&](const char* c) { return std::find(cases.begin(), cases.end(), c) != cases.end(); };
  if (wants("speed")) speed_cases(gguf, threads, repetitions, prompt_tokens, gen_tokens, corpus);
  if (wants("answers")) answer_cases(gguf, threads, repetitions, *collection, model_dir, queries_file, max_queries);
  return 0;
}
