#pragma once
// Martin Porter's 1980 stemmer, as SQLite FTS5's "porter" tokenizer applies it, so that an index we
// build ourselves holds the same terms as the chunks_fts table: words under 3 or over 64 bytes are
// left as they are, and the rules compare bytes (a non-ASCII byte is a consonant), as FTS5 does.

#include <string>
#include <string_view>

namespace kotae::text {

// `word` as unicode61 emits it: lowercase, diacritics removed.
std::string porter_stem(std::string_view word);

}  // namespace kotae::text
