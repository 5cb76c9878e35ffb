#pragma once
// Byte-level text decoding for the loaders: strict UTF-8 validation, and the Latin-1 fallback used for
// plain-text and Markdown files that are not UTF-8 (every byte string is valid Latin-1, so loading such
// a file never fails on its encoding; it may only read a rarer 8-bit encoding wrongly).

#include <string>
#include <string_view>

namespace kotae::text {

// True when `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view bytes);

// Decodes one code point at `pos` and advances past it; a malformed sequence yields U+FFFD and
// advances by one byte, so every input decodes.
char32_t next_code_point(std::string_view bytes, std::size_t& pos);

// Latin-1 (ISO-8859-1) to UTF-8, reading 0x80-0x9F as Windows-1252 does (curly quotes, dashes, euro)
// the way browsers treat "ISO-8859-1": those bytes are almost never C1 controls in real files.
std::string latin1_to_utf8(std::string_view bytes);

// `bytes` unchanged when it is valid UTF-8 (without a leading byte order mark), else its Latin-1
// decoding; `used_fallback` says which.
std::string decode_text_bytes(std::string_view bytes, bool* used_fallback = nullptr);

}  // namespace kotae::text
