#include "text/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>

namespace kotae::text {
namespace {

// Hugging Face's BertNormalizer and BertPreTokenizer take general categories from the Rust crate
// `unicode_categories` 0.1, whose tables are frozen at Unicode 8.0; utf8proc follows current Unicode
// (2.8: Unicode 15). These are the code points where the two disagree: assigned or re-categorised
// since 8.0. Measured over every code point against `tokenizers` 0.22.1 with utf8proc 2.8; the
// parity test's code-point sweep (tests/parity/corpus.py) fails when a Unicode update moves them.
struct CodePointRange {
  char32_t first, last;
};

template <std::size_t N>
bool in_table(const CodePointRange (&table)[N], char32_t c) {
  const auto* it = std::upper_bound(std::begin(table), std::end(table), c,
                                    [](char32_t x, const CodePointRange& r) { return x < r.first; });
  return it != std::begin(table) && c <= std::prev(it)->last;
}

// Format characters (Cf) added after Unicode 8.0: Hugging Face keeps them.
constexpr CodePointRange kFormatAfterUnicode8[] = {
    {0x890, 0x891},
    {0x8E2, 0x8E2},
    {0x110CD, 0x110CD},
    {0x13430, 0x1343F},
};

// Nonspacing marks (Mn) added after Unicode 8.0, and U+111C9 (Po in 8.0): Hugging Face keeps them
// when stripping accents.
constexpr CodePointRange kNonspacingMarkAfterUnicode8[] = {
    {0x7FD, 0x7FD},     {0x898, 0x89F},     {0x8CA, 0x8E1},     {0x9FE, 0x9FE},     {0xAFA, 0xAFF},
    {0xB55, 0xB55},     {0xC04, 0xC04},     {0xC3C, 0xC3C},     {0xD00, 0xD00},     {0xD3B, 0xD3C},
    {0xD81, 0xD81},     {0xEBA, 0xEBA},     {0xECE, 0xECE},     {0x180F, 0x180F},   {0x1885, 0x1886},
    {0x1ABF, 0x1ACE},   {0x1DF6, 0x1DFB},   {0xA82C, 0xA82C},   {0xA8C5, 0xA8C5},   {0xA8FF, 0xA8FF},
    {0xA9BD, 0xA9BD},   {0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50},
    {0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x11073, 0x11074}, {0x110C2, 0x110C2}, {0x111C9, 0x111C9},
    {0x111CF, 0x111CF}, {0x1123E, 0x1123E}, {0x11241, 0x11241}, {0x1133B, 0x1133B}, {0x11438, 0x1143F},
    {0x11442, 0x11444}, {0x11446, 0x11446}, {0x1145E, 0x1145E}, {0x1182F, 0x11837}, {0x11839, 0x1183A},
    {0x1193B, 0x1193C}, {0x1193E, 0x1193E}, {0x11943, 0x11943}, {0x119D4, 0x119D7}, {0x119DA, 0x119DB},
    {0x119E0, 0x119E0}, {0x11A01, 0x11A0A}, {0x11A33, 0x11A38}, {0x11A3B, 0x11A3E}, {0x11A47, 0x11A47},
    {0x11A51, 0x11A56}, {0x11A59, 0x11A5B}, {0x11A8A, 0x11A96}, {0x11A98, 0x11A99}, {0x11C30, 0x11C36},
    {0x11C38, 0x11C3D}, {0x11C3F, 0x11C3F}, {0x11C92, 0x11CA7}, {0x11CAA, 0x11CB0}, {0x11CB2, 0x11CB3},
    {0x11CB5, 0x11CB6}, {0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D}, {0x11D3F, 0x11D45},
    {0x11D47, 0x11D47}, {0x11D90, 0x11D91}, {0x11D95, 0x11D95}, {0x11D97, 0x11D97}, {0x11EF3, 0x11EF4},
    {0x11F00, 0x11F01}, {0x11F36, 0x11F3A}, {0x11F40, 0x11F40}, {0x11F42, 0x11F42}, {0x13440, 0x13440},
    {0x13447, 0x13455}, {0x16F4F, 0x16F4F}, {0x16FE4, 0x16FE4}, {0x1CF00, 0x1CF2D}, {0x1CF30, 0x1CF46},
    {0x1E000, 0x1E006}, {0x1E008, 0x1E018}, {0x1E01B, 0x1E021}, {0x1E023, 0x1E024}, {0x1E026, 0x1E02A},
    {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF},
    {0x1E944, 0x1E94A},
};

// Punctuation (P*) added after Unicode 8.0: Hugging Face does not split on it.
constexpr CodePointRange kPunctuationAfterUnicode8[] = {
    {0x61D, 0x61D},     {0x9FD, 0x9FD},     {0xA76, 0xA76},     {0xC77, 0xC77},     {0xC84, 0xC84},
    {0x1B7D, 0x1B7E},   {0x2E43, 0x2E4F},   {0x2E52, 0x2E5D},   {0x10EAD, 0x10EAD}, {0x10F55, 0x10F59},
    {0x10F86, 0x10F89}, {0x1144B, 0x1144F}, {0x1145A, 0x1145B}, {0x1145D, 0x1145D}, {0x11660, 0x1166C},
    {0x116B9, 0x116B9}, {0x1183B, 0x1183B}, {0x11944, 0x11946}, {0x119E2, 0x119E2}, {0x11A3F, 0x11A46},
    {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2}, {0x11B00, 0x11B09}, {0x11C41, 0x11C45}, {0x11C70, 0x11C71},
    {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF}, {0x12FF1, 0x12FF2}, {0x16E97, 0x16E9A},
    {0x16FE2, 0x16FE2}, {0x1E95E, 0x1E95F},
};

utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

}  // namespace

char32_t decode_utf8(std::string_view s, std::size_t& pos) {
  utf8proc_int32_t c = 0;
  const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos),
                                  static_cast<utf8proc_ssize_t>(s.size() - pos), &c);
  if (n <= 0) {
    pos += 1;
    return 0xFFFD;
  }
  pos += static_cast<std::size_t>(n);
  return static_cast<char32_t>(c);
}

void append_utf8(std::string& out, char32_t c) {
  utf8proc_uint8_t buffer[4];
  const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

std::size_t utf8_complete_length(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto byte = static_cast<unsigned char>(s[s.size() - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte: keep looking for its lead
    const std::size_t needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
    return needed > back ? s.size() - back : s.size();
  }
  return s.size();
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t pos = 0; pos < s.size();) {
    const std::size_t start = pos;
    const char32_t c = decode_utf8(s, pos);
    if (c == 0xFFFD && pos - start == 1) {
      append_utf8(out, c);
    } else {
      out.append(s.substr(start, pos - start));
    }
  }
  return out;
}

bool is_whitespace(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return c >= 0x2000 && c <= 0x200A;
  }
}

// The crate's "other" is Cc Cf Co Cs and, in effect, no unassigned code point (Cn): Hugging Face
// keeps unassigned code points, so newer emoji than utf8proc knows still become [UNK].
bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS: return true;
    case UTF8PROC_CATEGORY_CF: return !in_table(kFormatAfterUnicode8, c);
    default: return false;
  }
}

bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  if (c == 0x166D || c == 0x111C9) return true;  // Po in Unicode 8.0, So and Mn today
  switch (category(c)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return !in_table(kPunctuationAfterUnicode8, c);
    default: return false;
  }
}

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_nonspacing_mark(char32_t c) {
  if (c == 0x1734) return true;  // Mn in Unicode 8.0, Mc today
  return category(c) == UTF8PROC_CATEGORY_MN && !in_table(kNonspacingMarkAfterUnicode8, c);
}

}  // namespace kotae::text
