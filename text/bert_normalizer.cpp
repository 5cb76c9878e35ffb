#include "text/bert_normalizer.h"

#include <utf8proc.h>

#include "text/unicode.h"

namespace kotae::text {
namespace {

// Canonical decomposition of one code point (NFD), as Hugging Face's `unicode-normalization-alignments`
// yields it. Its tables predate Unicode 13, which gave U+11938 (Dives Akuru) a decomposition.
// Canonical reordering of combining marks is not done: it cannot change a token of this vocabulary,
// which holds no combining mark, and the marks that survive accent stripping are rare.
int decompose(char32_t c, utf8proc_int32_t* out, int capacity) {
  const auto n = c == 0x11938 ? 0
                              : utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), out, capacity,
                                                        UTF8PROC_DECOMPOSE, nullptr);
  if (n <= 0 || n > capacity) {
    out[0] = static_cast<utf8proc_int32_t>(c);
    return 1;
  }
  return static_cast<int>(n);
}

// Rust's char::to_lowercase (Unicode 16 in the Rust that built `tokenizers` 0.22.1): utf8proc's simple
// mapping, plus the pairs Unicode 16 added (utf8proc 2.8 knows Unicode 15).
char32_t lowercase_since_unicode16(char32_t c) {
  if (c >= 0x10D50 && c <= 0x10D65) return c + 0x20;  // Garay
  switch (c) {
    case 0x1C89: return 0x1C8A;
    case 0xA7CB: return 0x0264;
    case 0xA7CC: return 0xA7CD;
    case 0xA7DA: return 0xA7DB;
    case 0xA7DC: return 0x019B;
    default: return c;
  }
}

// One code point, except U+0130, which lowers to "i" + combining dot above.
void push_lowercase(NormalizedText& out, char32_t c, std::uint32_t b, std::uint32_t e) {
  if (c == 0x130) {
    out.push(U'i', b, e);
    out.push(0x307, b, e);
    return;
  }
  const char32_t lower = lowercase_since_unicode16(c);
  out.push(lower != c ? lower : static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))), b, e);
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
    // The steps run per code point in Hugging Face's order: clean, CJK spacing, NFD + drop Mn, lowercase.
    if (options.clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = U' ';
    }
    const bool cjk = options.handle_chinese_chars && is_chinese_char(c);
    if (cjk) out.push(U' ', b, e);
    int n = 1;
    if (options.strip_accents) {
      n = decompose(c, parts, 32);
    } else {
      parts[0] = static_cast<utf8proc_int32_t>(c);
    }
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
