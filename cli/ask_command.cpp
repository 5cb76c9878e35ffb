#include "cli/ask_command.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "assembly/answering.h"
#include "cli/report_error.h"
#include "cli/search_command.h"
#include "rag/answer_backends.h"
#include "rag/answer_json.h"

namespace kotae::cli {

int run_ask(const AskOptions& options) {
  auto mode = search::parse_search_mode(options.mode);
  if (!mode) return report_error(make_error(ErrorCode::invalid_argument, "--mode must be bm25, vector or hybrid"));
  assembly::AnsweringSettings settings{options.where, options.collection, options.rerank_model, options.backend};
  if (const char* key = std::getenv(options.openai_key_env.c_str())) settings.backends.openai_api_key = key;
  auto answering = assembly::assemble_answering(std::move(settings));
  if (!answering) return report_error(answering.error());

  rag::AnswerOptions ask;
  ask.search.mode = *mode;
  ask.search.k = options.k;
  if (auto added =
          add_filter_flags(ask.search.filter, options.where_filter, options.documents, (*answering)->collection());
      !added) {
    return report_error(added.error());
  }
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
  auto answer = (*answering)
                    ->pipeline->ask(options.question, (*answering)->collection(), ask, nullptr,
                                    options.json ? rag::AnswerSink() : rag::AnswerSink(print_events));
  if (!answer) return report_error(answer.error());

  if (options.json) {
    std::cout << rag::to_json(*answer, options.question).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::printf("\n\nSources:\n");
  for (const auto& s : answer->sources) {
    bool cited = false;
    for (const auto& c : answer->citations) cited = cited || c.number == s.number;
    std::printf("  [%d]%s %s (%s%s)\n", s.number, cited ? "*" : " ",
                s.title.empty() ? s.document.c_str() : s.title.c_str(), s.document.c_str(), rag::place_of(s).c_str());
    for (const auto& c : answer->citations) {  // a cited table row, under its header
      if (c.number != s.number || c.table_header.empty()) continue;
      std::string lines = c.table_header + "\n" + c.text;
      for (std::size_t at = 0; at != std::string::npos;) {
        const std::size_t next = lines.find('\n', at);
        std::printf("      %s\n", lines.substr(at, next == std::string::npos ? next : next - at).c_str());
        at = next == std::string::npos ? next : next + 1;
      }
    }
  }
  for (const auto& f : answer->fallbacks)
    std::printf("(%s could not answer: %s)\n", f.backend.c_str(), f.error.c_str());
  const auto& t = answer->timings;
  std::printf("answered by %s in %.0f ms (embed %.1f, retrieve %.1f, rerank %.1f, generate %.1f)\n",
              answer->backend.c_str(), t.total, t.embed, t.retrieve, t.rerank, t.generate);
  return 0;
}

}  // namespace kotae::cli
