#pragma once
// What the conversation endpoints read from a request: a conversation id (from a path or POST /v1/ask),
// GET /v1/conversations' query, PATCH /v1/conversations/{id}'s title; and the title a new conversation
// takes from its first question. Each reader throws an ApiError naming what is wrong.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/http_message.h"

namespace kotae::server {

inline constexpr std::size_t kMaxTitleCharacters = 200;  // Unicode code points
inline constexpr std::size_t kDefaultConversationsListed = 100, kMaxConversationsListed = 1000;

// 404 for an id no conversation of the caller's tenant has (another tenant's included: the same answer).
ApiError unknown_conversation(const std::string& id);
// The id when it has a conversation id's form ("conv_" and 32 lower-case hex digits), else the 404
// an unknown one gets, so a malformed id never reaches a store.
const std::string& conversation_id(const std::string& id);

// GET /v1/conversations?collection=NAME&limit=N
struct ConversationListQuery {
  std::string collection;  // empty: every collection
  std::size_t limit = kDefaultConversationsListed;
};
ConversationListQuery read_conversation_list_query(const HttpRequest& request);

// PATCH /v1/conversations/{id} {title}: control characters become spaces, then it is trimmed; 400
// unless 1 to kMaxTitleCharacters remain.
std::string read_conversation_title(const nlohmann::json& body);
// A new conversation's title: its first question as a title is read, cut to kMaxTitleCharacters at a
// character's boundary.
std::string title_of_question(std::string_view question);

}  // namespace kotae::server
