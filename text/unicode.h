#pragma once
// The Unicode questions a BERT tokenizer asks, answered the way Hugging Face `tokenizers` (Rust)
// answers them, so that our token ids match theirs.

#include <string>
#include <string_view>

namespace kotae::text {

// Decodes one code point at `pos` and advances it; an invalid byte yields U+FFFD and advances by one.
char32_t decode_utf8(std::string_view s, std::size_t& pos);
void append_utf8(std::string& out, char32_t c);
// The longest prefix of `s` that does not end inside an unfinished multi-byte sequence (a streamed
// text's bytes up to there can be shown; the rest waits for the next piece).
std::size_t utf8_complete_length(std::string_view s);
// `s` with every invalid byte replaced by U+FFFD, so it is safe for JSON and terminals.
std::string valid_utf8(std::string_view s);

bool is_whitespace(char32_t c);    // Rust char::is_whitespace (White_Space property)
bool is_control(char32_t c);       // Cc, Co, Cs and Unicode 8.0 Cf (as HF), except tab, newline, return
bool is_punctuation(char32_t c);   // ASCII punctuation or categories Pc Pd Ps Pe Pi Pf Po
bool is_chinese_char(char32_t c);  // the CJK blocks BERT surrounds with spaces
bool is_nonspacing_mark(char32_t c);

}  // namespace kotae::text
