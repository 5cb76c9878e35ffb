#include "text/bert_normalizer.h"

#include <utf8proc.h>

#include "text/unicode.h"

namespace kotae::text {
namespace {

// Canonical decomposition of one code point (NFD), as Rust's unicode-normalization yields it.
int decompose(char32_t c, utf8proc_int32_t* out, int capacity) {
  const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), out, capacity, UTF8PROC_DECOMPOSE, nullptr);
  if (n <= 0 || n > capacity) {
    out[0] = static_cast<utf8proc_int32_t>(c);
    return 1;
  }
  return static_cast<int>(n);
}

// Rust's char::to_lowercase: one code point, except U+0130 which lowers to "i" + combining dot.
void push_lowercase(NormalizedText& out, char32_t c, std::uint32_t b, std::uint32_t e) {
  if (c == 0x130) {
    out.push(U'i', b, e);
    out.push(0x307, b, e);
    return;
  }
  out.push(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))), b, e);
}

}  // namespace

NormalizedText bert_normalize(std::string_view utf8, const BertNormalizerOptions& options) {
  NormalizedText out;
  out.chars.reserve(utf8.size());
  out.begin.reserve(utf8.size());
  out.end.reserve(utf8.size());
  utf8proc_int32_t parts[32];
  std::size_t pos = 0;
  while (pos < utf8.size()) {
    const auto b = static_cast<std::uint32_t>(pos);
    char32_t c = decode_utf8(utf8, pos);
    const auto e = static_cast<std::uint32_t>(pos);
    if (options.clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = U' ';
    }
    const bool cjk = options.handle_chinese_chars && is_chinese_char(c);
    if (cjk) out.push(U' ', b, e);
    const int n = options.strip_accents ? decompose(c, parts, 32) : 1;
    if (n == 1 && !options.strip_accents) parts[0] = static_cast<utf8proc_int32_t>(c);
    for (int i = 0; i < n; ++i) {
      const auto part = static_cast<char32_t>(parts[i]);
      if (options.strip_accents && is_nonspacing_mark(part)) continue;
      if (options.lowercase) {
        push_lowercase(out, part, b, e);
      } else {
        out.push(part, b, e);
      }
    }
    if (cjk) out.push(U' ', b, e);
  }
  return out;
}

}  // namespace kotae::text
