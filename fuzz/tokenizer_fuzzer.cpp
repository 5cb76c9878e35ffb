// The WordPiece tokenizer (text/wordpiece_tokenizer.h) with the default model's vocabulary. The first
// byte picks the truncation length (0: none); the rest is the text, or two texts split at the first
// NUL for encode_pair. Every output must keep the Encoding's shape: parallel arrays, ids in the
// vocabulary, offsets inside the text they point into, at most max_length tokens.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/assert.h"
#include "fuzz/model_tokenizer.h"

namespace {

using kotae::text::Encoding;

void check(const Encoding& e, std::string_view a, std::string_view b, std::size_t vocab_size) {
  KOTAE_ASSERT(e.type_ids.size() == e.size() && e.offsets.size() == e.size() &&
               e.special_tokens_mask.size() == e.size());
  for (std::size_t i = 0; i < e.size(); ++i) {
    KOTAE_ASSERT(e.ids[i] >= 0 && static_cast<std::size_t>(e.ids[i]) < vocab_size);
    const auto [begin, end] = e.offsets[i];
    const auto text_size = e.type_ids[i] == 0 ? a.size() : b.size();
    KOTAE_ASSERT(begin <= end && end <= text_size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kotae::fuzz::model_tokenizer();  // loaded before the first input, so a missing file fails at once
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& tokenizer = kotae::fuzz::model_tokenizer();
  const std::size_t max_length = data[0] % 64;  // includes [CLS]/[SEP]; small values hit the edge cases
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto nul = input.find('\0');
  if (nul == std::string_view::npos) {
    const auto whole = tokenizer.tokenize(input);
    check(whole, input, {}, tokenizer.vocab_size());
    const auto e = tokenizer.encode(input, max_length);
    check(e, input, {}, tokenizer.vocab_size());
    if (max_length >= 2) KOTAE_ASSERT(e.size() <= max_length);
    KOTAE_ASSERT(max_length != 0 || e.size() == whole.size() + 2);
  } else {
    const auto a = input.substr(0, nul), b = input.substr(nul + 1);
    for (auto truncation : {kotae::text::PairTruncation::longest_first, kotae::text::PairTruncation::only_second}) {
      const auto e = tokenizer.encode_pair(a, b, max_length, truncation);
      check(e, a, b, tokenizer.vocab_size());
      if (max_length >= 3) KOTAE_ASSERT(e.size() <= max_length);
    }
  }
  return 0;
}
