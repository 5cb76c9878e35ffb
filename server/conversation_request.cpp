#include "server/conversation_request.h"

#include <algorithm>
#include <charconv>

#include "server/json_body.h"

namespace kotae::server {
namespace {

bool continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Control characters (line breaks, tabs, NUL) as spaces, without spaces around. JSON strings are
// valid UTF-8, so only ASCII bytes are controls here (C1 controls are two-byte sequences, kept).
std::string tidy(std::string_view text) {
  std::string out(text);
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; };
  std::replace_if(out.begin(), out.end(), control, ' ');
  const auto first = out.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(' ') + 1 - first);
}

std::size_t characters(std::string_view text) {
  const auto starts_one = [](char c) { return !continuation_byte(c); };
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), starts_one));
}

}  // namespace

ApiError unknown_conversation(const std::string& id) {
  return {404, "not_found", "no conversation '" + id + "'"};
}

const std::string& conversation_id(const std::string& id) {
  constexpr std::string_view prefix = "conv_";
  const bool well_formed = id.size() == prefix.size() + 32 && id.starts_with(prefix) &&
                           std::all_of(id.begin() + prefix.size(), id.end(),
                                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (!well_formed) throw ApiError{404, "not_found", "no such conversation (an id is 'conv_' and 32 hex digits)"};
  return id;
}

ConversationListQuery read_conversation_list_query(const HttpRequest& request) {
  ConversationListQuery query;
  query.collection = request.query_value("collection");
  if (const auto limit = request.query.find("limit"); limit != request.query.end()) {
    const std::string& text = limit->second;
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > kMaxConversationsListed) {
      throw bad_request("'limit' must be an integer from 1 to " + std::to_string(kMaxConversationsListed));
    }
    query.limit = value;
  }
  return query;
}

std::string read_conversation_title(const nlohmann::json& body) {
  std::string title = tidy(string_field(body, "title"));
  if (title.empty()) throw bad_request("'title' must not be empty (or only spaces)");
  if (characters(title) > kMaxTitleCharacters) {
    throw bad_request("'title' must be at most " + std::to_string(kMaxTitleCharacters) + " characters");
  }
  return title;
}

std::string title_of_question(std::string_view question) {
  std::string title = tidy(question);
  std::size_t end = 0, count = 0;
  while (end < title.size() && count < kMaxTitleCharacters) {
    ++end, ++count;
    while (end < title.size() && continuation_byte(title[end])) ++end;
  }
  title.resize(end);
  title = tidy(title);
  return title.empty() ? "untitled" : title;  // a question of control characters alone
}

}  // namespace kotae::server
