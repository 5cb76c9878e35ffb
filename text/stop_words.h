#pragma once
// English stop words (NLTK's list: Snowball's plus a few contractions' pieces), for query-side use
// by BM25: function words and question words ("what", "how", "does") carry no topic, and in an OR
// query they pull in every chunk that happens to use them. Documents are indexed with them, so
// phrase matching is not affected.

#include <string_view>

namespace kotae::text {

// `word` in lowercase ASCII.
bool is_english_stop_word(std::string_view word);

}  // namespace kotae::text
