#include "model/token_estimate.h"

#include <algorithm>

namespace kotae {

// English prose and code average about 4 bytes per token in current BPE vocabularies, so 3.5 bytes per
// token leaves a margin. Characters of 3 or 4 UTF-8 bytes (CJK, emoji) are counted as one token each:
// bytes / 3.5 would under-count them, as they often take a token or more apiece.
std::size_t estimate_tokens(std::string_view text) {
  std::size_t wide_chars = 0;
  std::size_t other_bytes = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 1;
    if (length > 1) {
      ++wide_chars;
    } else {
      ++other_bytes;
    }
    i += std::min(length, text.size() - i);
  }
  return wide_chars + (other_bytes * 2 + 6) / 7;  // ceil(other_bytes / 3.5)
}

}  // namespace kotae
