#include "cli/ask_command.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/collection_access.h"
#include "core/paths.h"
#include "model/llama_generator.h"
#include "model/model_manifest.h"
#include "model/openai_chat_client.h"
#include "rag/answer_pipeline.h"

namespace kotae::cli {
namespace {

namespace fs = std::filesystem;

// A GGUF path as given, or the "gguf" file of a model installed in DATA/models.
Result<fs::path> find_gguf(const fs::path& data_dir, const std::string& model) {
  std::error_code ec;
  if (fs::is_regular_file(model, ec)) return fs::path(model);
  const fs::path dir = models_dir(data_dir) / model;
  auto manifest = load_model_manifest(dir);
  if (!manifest) return make_error(ErrorCode::not_found, "no GGUF file or installed model '" + model + "'");
  const ModelFile* gguf = manifest->file_with_role("gguf");
  if (!gguf) return make_error(ErrorCode::invalid_argument, "model '" + model + "' has no GGUF file");
  if (!fs::is_regular_file(dir / gguf->path, ec)) {
    return make_error(ErrorCode::not_found, "model '" + model + "' is not installed (scripts/setup --model " + model + ")");
  }
  return dir / gguf->path;
}

struct Backends {
  std::unique_ptr<LlamaGenerator> llama;
  std::unique_ptr<OpenAIChatClient> openai;
  std::vector<rag::AnswerBackend> order;
};

Result<Backends> set_up_backends(const AskOptions& o) {
  std::vector<std::string> names = o.backends;
  if (names.empty()) {
    if (!o.model.empty()) names.push_back("llama");
    if (!o.openai_url.empty()) names.push_back("openai");
    names.push_back("extractive");
  }
  Backends b;
  for (const auto& name : names) {
    if (name == "llama") {
      rag::AnswerBackend backend{"llama.cpp"};
      if (o.model.empty()) {
        backend.unavailable = "no model given (--model)";
      } else if (auto path = find_gguf(o.data_dir, o.model); !path) {
        backend.unavailable = path.error().message;
      } else if (auto loaded = LlamaGenerator::load(*path, {.context_length = o.context, .threads = o.threads,
                                                            .chat_template = o.chat_template});
                 !loaded) {
        backend.unavailable = loaded.error().message;
      } else {
        b.llama = std::move(*loaded);
        backend.generator = b.llama.get();
      }
      b.order.push_back(std::move(backend));
    } else if (name == "openai") {
      rag::AnswerBackend backend{"openai"};
      const char* key = std::getenv(o.openai_key_env.c_str());
      OpenAIChatOptions options;
      options.base_url = o.openai_url;
      options.model = o.openai_model;
      options.api_key = key ? key : "";
      options.context_tokens = static_cast<std::size_t>(o.context);
      options.request_timeout_ms = o.openai_timeout_ms;
      if (o.openai_url.empty()) {
        backend.unavailable = "no server given (--openai-url)";
      } else if (auto client = OpenAIChatClient::create(options); !client) {
        backend.unavailable = client.error().message;
      } else {
        b.openai = std::move(*client);
        backend.generator = b.openai.get();
      }
      b.order.push_back(std::move(backend));
    } else if (name == "extractive") {
      b.order.push_back({"extractive"});
    } else {
      return make_error(ErrorCode::invalid_argument, "unknown back-end '" + name + "' (llama, openai or extractive)");
    }
  }
  return b;
}

nlohmann::json to_json(const rag::Citation& c) {
  return {{"number", c.number},
          {"chunk_id", c.chunk_id},
          {"document", c.document},
          {"title", c.title},
          {"page", c.page ? nlohmann::json(c.page) : nlohmann::json(nullptr)},
          {"start", c.start},
          {"end", c.end},
          {"text", c.text},
          {"answer_start", c.answer_start},
          {"answer_end", c.answer_end}};
}

nlohmann::json to_json(const rag::Source& s) {
  return {{"number", s.number},         {"chunk_id", s.chunk_id},   {"document", s.document},
          {"title", s.title},           {"page_first", s.page_first}, {"page_last", s.page_last},
          {"start", s.begin},           {"end", s.end},             {"relevance", s.relevance},
          {"score", s.score},           {"heading_path", s.heading_path}, {"text", s.text}};
}

nlohmann::json to_json(const rag::Answer& a, const std::string& question) {
  nlohmann::json citations = nlohmann::json::array(), sources = nlohmann::json::array(),
                 fallbacks = nlohmann::json::array();
  for (const auto& c : a.citations) citations.push_back(to_json(c));
  for (const auto& s : a.sources) sources.push_back(to_json(s));
  for (const auto& f : a.fallbacks) fallbacks.push_back({{"backend", f.backend}, {"error", f.error}});
  const auto& t = a.timings;
  return {{"question", question},
          {"answer", a.text},
          {"backend", a.backend},
          {"covered", a.covered},
          {"citations", citations},
          {"sources", sources},
          {"fallbacks", fallbacks},
          {"timings_ms",
           {{"embed", t.embed}, {"retrieve", t.retrieve}, {"rerank", t.rerank}, {"prompt", t.prompt},
            {"generate", t.generate}, {"first_token", t.first_token}, {"total", t.total}}},
          {"generation",
           {{"prompt_tokens", a.generation.prompt_tokens}, {"reused_prompt_tokens", a.generation.reused_prompt_tokens},
            {"generated_tokens", a.generation.generated_tokens}, {"finish_reason", a.generation.finish_reason}}}};
}

std::string pages(const rag::Source& s) {
  if (s.page_first == 0) return "";
  if (s.page_first == s.page_last) return ", page " + std::to_string(s.page_first);
  return ", pages " + std::to_string(s.page_first) + "-" + std::to_string(s.page_last);
}

}  // namespace

int run_ask(const AskOptions& options) {
  auto mode = search::parse_search_mode(options.mode);
  if (!mode) return report_error(make_error(ErrorCode::invalid_argument, "--mode must be bm25, vector or hybrid"));
  auto open = open_for_search(options.data_dir, options.collection);
  if (!open) return report_error(open.error());
  auto reranker = load_reranker(options.data_dir, options.rerank_model);
  if (!reranker) return report_error(reranker.error());
  auto backends = set_up_backends(options);
  if (!backends) return report_error(backends.error());

  rag::AnswerPipeline pipeline(*open->encoder, reranker->get(), backends->order);
  rag::AnswerOptions ask;
  ask.search.mode = *mode;
  ask.search.k = options.k;
  ask.min_relevance = options.min_relevance;
  ask.generation = {options.max_tokens, options.temperature, options.top_p, options.seed, options.stop};

  // Text mode streams the answer as it comes; a restart (a back-end failing mid-answer) says so.
  auto print_events = [&](const rag::AnswerEvent& event) {
    using Kind = rag::AnswerEvent::Kind;
    if (event.kind == Kind::token) {
      std::fwrite(event.token.data(), 1, event.token.size(), stdout);
      std::fflush(stdout);
    } else if (event.kind == Kind::restart) {
      std::fprintf(stdout, "\n[the back-end failed mid-answer; trying the next one]\n");
    }
    return true;
  };
  auto answer = pipeline.ask(options.question, *open->collection, ask, nullptr,
                             options.json ? rag::AnswerSink() : rag::AnswerSink(print_events));
  if (!answer) return report_error(answer.error());

  if (options.json) {
    std::cout << to_json(*answer, options.question).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::printf("\n\nSources:\n");
  for (const auto& s : answer->sources) {
    bool cited = false;
    for (const auto& c : answer->citations) cited = cited || c.number == s.number;
    std::printf("  [%d]%s %s (%s%s)\n", s.number, cited ? "*" : " ", s.title.empty() ? s.document.c_str() : s.title.c_str(),
                s.document.c_str(), pages(s).c_str());
  }
  for (const auto& f : answer->fallbacks) std::printf("(%s could not answer: %s)\n", f.backend.c_str(), f.error.c_str());
  const auto& t = answer->timings;
  std::printf("answered by %s in %.0f ms (embed %.1f, retrieve %.1f, rerank %.1f, generate %.1f)\n",
              answer->backend.c_str(), t.total, t.embed, t.retrieve, t.rerank, t.generate);
  return 0;
}

}  // namespace kotae::cli
