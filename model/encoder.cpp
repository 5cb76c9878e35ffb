#include "model/encoder.h"

namespace kotae {

Result<Embeddings> Encoder::embed(std::span<const std::string> texts) const {
  std::vector<text::Encoding> encodings;
  encodings.reserve(texts.size());
  for (const auto& t : texts) encodings.push_back(tokenize(t));
  return embed_encoded(encodings);
}

}  // namespace kotae
