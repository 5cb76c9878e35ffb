#pragma once
// Prompt assembly for a generator: an instruction to answer from the numbered sources and cite them
// as [n], the conversation so far, then this turn's new sources and the question, all fitted to the
// generator's context with room left for the answer. The layout keeps a conversation's prefix stable
// from turn to turn (earlier turns and their sources are never rewritten while they fit), so a local
// model reuses their KV cache. When it does not fit: earlier turns lose their sources (condensed to
// question and answer), then the oldest turns go, then the weakest new sources, then the last
// source's text is cut.

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/generator.h"
#include "rag/source.h"

namespace kotae::rag {

struct Prompt {
  std::vector<ChatMessage> messages;
  std::vector<Source> sources;      // every numbered source the prompt shows, for resolving citations
  std::vector<Source> new_sources;  // those first shown in this turn, numbered
  std::size_t history_turns = 0;    // earlier turns kept
  std::size_t condensed_turns = 0;  // of those, shown without their sources
  std::size_t dropped_sources = 0;  // retrieved sources left out to fit
  bool truncated_source = false;    // the last source's text was cut to fit
  std::size_t tokens = 0;           // the prompt's size as the generator counts it
};

// The instruction every generated answer starts from.
extern const char* const kAnswerInstruction;

// `retrieved` best first (numbers are assigned here); answer_tokens are kept free for the answer.
Result<Prompt> build_prompt(const Generator& generator, std::string_view question, std::span<const Source> retrieved,
                            const Conversation& conversation, std::size_t answer_tokens);

}  // namespace kotae::rag
