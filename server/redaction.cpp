#include "server/redaction.h"

namespace kotae::server {
namespace {

bool ends_location(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '"' || c == '\'' || c == ',' || c == ')';
}

}  // namespace

std::string redact_locations(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const bool word_start =
        i == 0 || ends_location(text[i - 1]) || text[i - 1] == '(' || text[i - 1] == ':' || text[i - 1] == '=';
    const auto scheme_end = text.find("://", i);
    // A URL: letters right before "://" back to the start of the word.
    if (word_start && scheme_end != std::string_view::npos && scheme_end > i &&
        text.substr(i, scheme_end - i).find_first_not_of("abcdefghijklmnopqrstuvwxyz+.-") == std::string_view::npos) {
      out += "<url>";
      for (i = scheme_end + 3; i < text.size() && !ends_location(text[i]); ++i) {
      }
      continue;
    }
    if (word_start && text[i] == '/') {
      out += "<path>";
      for (; i < text.size() && !ends_location(text[i]); ++i) {
      }
      continue;
    }
    out += text[i++];
  }
  return out;
}

}  // namespace kotae::server
