#include "model/encoder.h"

namespace kotae {

const TextPrefixes& Encoder::prefixes() const {
  static const TextPrefixes none;
  return none;
}

text::Encoding Encoder::tokenize_as(TextRole role, std::string_view text) const {
  const std::string& prefix = role == TextRole::query ? prefixes().query : prefixes().passage;
  if (prefix.empty()) return tokenize(text);
  text::Encoding out = tokenize(prefix + std::string(text));
  const auto shift = static_cast<std::uint32_t>(prefix.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.special_tokens_mask[i]) continue;
    if (out.offsets[i].first < shift) {
      out.special_tokens_mask[i] = 1;
      out.offsets[i] = {0, 0};
    } else {
      out.offsets[i].first -= shift;
      out.offsets[i].second -= shift;
    }
  }
  return out;
}

Result<Embeddings> Encoder::embed(std::span<const std::string> texts, TextRole role) const {
  std::vector<text::Encoding> encodings;
  encodings.reserve(texts.size());
  for (const auto& t : texts) encodings.push_back(tokenize_as(role, t));
  return embed_encoded(encodings);
}

Result<Embeddings> Encoder::embed_encoded_unnormalized(std::span<const text::Encoding>) const {
  return make_error(ErrorCode::unsupported, "model " + id() + " gives only unit vectors here");
}

Result<RangeEmbeddings> Encoder::embed_encoded_with_ranges(std::span<const text::Encoding>,
                                                           std::span<const std::vector<TokenRange>>) const {
  return make_error(ErrorCode::unsupported, id() + " cannot pool vectors of parts of its input");
}

}  // namespace kotae
