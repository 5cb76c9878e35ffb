#pragma once
// A conversation of POST /v1/ask as it is stored (store/conversation_store.h) and as
// GET /v1/conversations shows it: a summary, and its turns as JSON, each
//   {question, answer, covered, sources, citations, created_at}
// with the sources and citations as /v1/ask returned them. Times are unix seconds (fractional). A
// follow-up rebuilds its history from the turns, so it goes on wherever and whenever it is asked.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "rag/answer_pipeline.h"
#include "store/conversation_store.h"

namespace kotae::server {

using store::ConversationRecord;
using store::ConversationSummary;

// {id, object: "conversation", collection, title, created_at, updated_at, turns: COUNT}
nlohmann::json summary_json(const ConversationSummary& summary);
// The same with "turns" the list of turns.
nlohmann::json conversation_json(const ConversationRecord& record);

// One answered question as a turn.
nlohmann::json turn_json(std::string_view question, const rag::Answer& answer, double answered_at);
// What a follow-up builds on: the covered turns, each with the sources first shown in it (as the
// answer pipeline keeps them), so a source keeps its number. Corrupt when a turn is not as turn_json
// writes it.
Result<rag::Conversation> conversation_history(const nlohmann::json& turns);

}  // namespace kotae::server
