#pragma once
// BERT text normalisation (clean-up, CJK spacing, accent stripping, lower-casing) that remembers, for
// every output code point, the byte span of the input it came from: token offsets point into the
// caller's original text.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kotae::text {

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};

struct NormalizedText {
  std::u32string chars;
  std::vector<std::uint32_t> begin;  // byte offset in the input where chars[i] comes from
  std::vector<std::uint32_t> end;    // one past its last byte

  void push(char32_t c, std::uint32_t b, std::uint32_t e) {
    chars.push_back(c);
    begin.push_back(b);
    end.push_back(e);
  }
  std::size_t size() const { return chars.size(); }
};

NormalizedText bert_normalize(std::string_view utf8, const BertNormalizerOptions& options);

}  // namespace kotae::text
