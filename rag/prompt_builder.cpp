#include "rag/prompt_builder.h"

#include <algorithm>
#include <set>
#include <string>

#include "rag/citations.h"
#include "text/unicode.h"

namespace kotae::rag {

const char* const kAnswerInstruction =
    "You answer questions using only the numbered sources in this conversation. After each sentence, cite "
    "the sources that support it by their numbers in square brackets, like [1] or [2][3]. If the sources do "
    "not contain the answer, say that the documents do not cover the question. Answer concisely, in the "
    "language of the question.";

namespace {

// Said again after the question, where small models heed it most.
constexpr std::string_view kCitationReminder =
    "\n\nAnswer in a few sentences, each followed by the number of its source, like [1].";

// `remind`: a turn shown as it was asked (a condensed one is its bare question).
std::string render_turn_question(std::span<const Source> shown, std::span<const int> also_relevant,
                                 std::string_view question, bool remind) {
  std::string out;
  if (!shown.empty()) {
    out += "Sources:\n";
    for (const auto& s : shown) {
      out += citation_marker(s.number);
      out += ' ';
      out += s.title.empty() ? s.document : s.title;
      out += place_of(s);
      out += '\n';
      out += s.text;
      out += "\n\n";
    }
  }
  if (!also_relevant.empty()) {
    out += "Also relevant: the sources above numbered";
    for (const int n : also_relevant) {
      out += ' ';
      out += citation_marker(n);
    }
    out += ".\n\n";
  }
  out += "Question: ";
  out += question;
  if (remind) out += kCitationReminder;
  return out;
}

// One way of laying out the prompt; build_prompt shrinks it step by step until it fits.
struct Layout {
  std::size_t first_turn = 0;      // earlier turns before this one are left out
  std::size_t condensed_upto = 0;  // earlier turns before this one are shown without sources
  std::size_t new_source_count = 0;
  std::size_t last_source_bytes = std::string::npos;  // the last new source's text is cut to this
};

Prompt render(const Layout& layout, std::string_view question, std::span<const Source> retrieved,
              const Conversation& conversation) {
  Prompt p;
  p.messages.push_back({"system", kAnswerInstruction});
  std::set<std::int64_t> shown_chunks;
  const auto& turns = conversation.turns;
  for (std::size_t t = layout.first_turn; t < turns.size(); ++t) {
    const bool condensed = t < layout.condensed_upto;
    std::span<const Source> shown = condensed ? std::span<const Source>() : std::span<const Source>(turns[t].sources);
    p.messages.push_back({"user", render_turn_question(shown, {}, turns[t].question, !condensed)});
    p.messages.push_back({"assistant", turns[t].answer});
    for (const auto& s : shown) {
      p.sources.push_back(s);
      shown_chunks.insert(s.chunk_id);
    }
    ++p.history_turns;
    if (condensed) ++p.condensed_turns;
  }
  std::vector<int> also_relevant;
  int next = conversation.next_source_number();
  for (const auto& s : retrieved) {
    if (shown_chunks.count(s.chunk_id)) {
      for (const auto& earlier : p.sources) {
        if (earlier.chunk_id == s.chunk_id) also_relevant.push_back(earlier.number);
      }
      continue;
    }
    if (p.new_sources.size() == layout.new_source_count) {
      ++p.dropped_sources;
      continue;
    }
    Source numbered = s;
    numbered.number = next++;
    p.new_sources.push_back(std::move(numbered));
  }
  if (!p.new_sources.empty() && layout.last_source_bytes < p.new_sources.back().text.size()) {
    std::string& text = p.new_sources.back().text;
    text.resize(text::utf8_complete_length(std::string_view(text).substr(0, layout.last_source_bytes)));
    text += " …";
    p.truncated_source = true;
  }
  p.messages.push_back({"user", render_turn_question(p.new_sources, also_relevant, question, true)});
  p.sources.insert(p.sources.end(), p.new_sources.begin(), p.new_sources.end());
  return p;
}

std::size_t count(const Generator& generator, const Prompt& p) {
  std::size_t tokens = 0;
  for (const auto& m : p.messages) tokens += generator.count_tokens(m.content) + generator.tokens_per_message();
  return tokens;
}

}  // namespace

Result<Prompt> build_prompt(const Generator& generator, std::string_view question, std::span<const Source> retrieved,
                            const Conversation& conversation, std::size_t answer_tokens) {
  const std::size_t context = generator.context_tokens();
  if (answer_tokens >= context) {
    return make_error(
        ErrorCode::invalid_argument,
        std::to_string(answer_tokens) + " answer tokens leave no room in a context of " + std::to_string(context));
  }
  const std::size_t budget = context - answer_tokens;
  const std::size_t turns = conversation.turns.size();
  Layout layout{0, 0, retrieved.size()};
  for (;;) {
    Prompt p = render(layout, question, retrieved, conversation);
    p.tokens = count(generator, p);
    if (p.tokens <= budget) return p;
    if (layout.condensed_upto < turns) {
      ++layout.condensed_upto;
    } else if (layout.first_turn < turns) {
      ++layout.first_turn;
    } else if (p.new_sources.size() > 1) {
      layout.new_source_count = p.new_sources.size() - 1;
    } else if (!p.new_sources.empty() && p.new_sources.back().text.size() > 64) {
      const std::size_t shown = std::min(layout.last_source_bytes, p.new_sources.back().text.size());
      layout.last_source_bytes = shown * 3 / 4;
    } else {
      return make_error(ErrorCode::invalid_argument, "the question does not fit the generator's context of " +
                                                         std::to_string(context) + " tokens with " +
                                                         std::to_string(answer_tokens) + " kept for the answer");
    }
  }
}

}  // namespace kotae::rag
