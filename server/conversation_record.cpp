#include "server/conversation_record.h"

#include <algorithm>

#include "rag/answer_json.h"

namespace kotae::server {

nlohmann::json summary_json(const ConversationSummary& s) {
  return {{"id", s.id},       {"object", "conversation"},   {"collection", s.collection},
          {"title", s.title}, {"created_at", s.created_at}, {"updated_at", s.updated_at},
          {"turns", s.turns}};
}

nlohmann::json conversation_json(const ConversationRecord& record) {
  auto json = summary_json(record.summary);
  json["turns"] = record.turns;
  return json;
}

nlohmann::json turn_json(std::string_view question, const rag::Answer& answer, double answered_at) {
  return {{"question", question},
          {"answer", answer.text},
          {"covered", answer.covered},
          {"sources", rag::sources_json(answer.sources)},
          {"citations", rag::citations_json(answer.citations)},
          {"created_at", answered_at}};
}

Result<rag::Conversation> conversation_history(const nlohmann::json& turns) {
  rag::Conversation history;
  if (!turns.is_array()) return make_error(ErrorCode::corrupt, "a conversation's turns are not a JSON array");
  for (const auto& turn : turns) {
    // The pipeline keeps a turn only when the documents covered its question (the sources of one that
    // was not are numbered again by the next).
    if (!turn.is_object()) return make_error(ErrorCode::corrupt, "a conversation's turn is not a JSON object");
    const auto question = turn.find("question"), answer = turn.find("answer"), sources = turn.find("sources"),
               covered = turn.find("covered");
    if (question == turn.end() || !question->is_string() || answer == turn.end() || !answer->is_string() ||
        sources == turn.end() || covered == turn.end() || !covered->is_boolean()) {
      return make_error(ErrorCode::corrupt, "a conversation's turn lacks its question, answer, sources or covered");
    }
    if (!covered->get<bool>()) continue;
    auto shown = KOTAE_TRY_VALUE(rag::sources_from_json(*sources));
    std::erase_if(shown, [next = history.next_source_number()](const rag::Source& s) { return s.number < next; });
    history.turns.push_back({question->get<std::string>(), answer->get<std::string>(), std::move(shown)});
  }
  return history;
}

}  // namespace kotae::server
