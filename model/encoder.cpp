#include "model/encoder.h"

namespace kotae {

Result<Embeddings> Encoder::embed(std::span<const std::string> texts) const {
  std::vector<text::Encoding> encodings;
  encodings.reserve(texts.size());
  for (const auto& t : texts) encodings.push_back(tokenize(t));
  return embed_encoded(encodings);
}

Result<RangeEmbeddings> Encoder::embed_encoded_with_ranges(std::span<const text::Encoding>,
                                                          std::span<const std::vector<TokenRange>>) const {
  return make_error(ErrorCode::unsupported, id() + " cannot pool vectors of parts of its input");
}

}  // namespace kotae
