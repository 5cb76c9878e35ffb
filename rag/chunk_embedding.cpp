#include "rag/chunk_embedding.h"

#include "text/sentences.h"

namespace kotae::rag {

Result<EmbeddedChunks> embed_chunks(const Encoder& encoder, std::span<const std::string> texts) {
  std::vector<text::Encoding> encodings;
  std::vector<std::vector<text::SentenceSpan>> spans;
  std::vector<std::vector<TokenRange>> ranges;
  for (const auto& t : texts) {
    const text::Encoding& model_tokens = encodings.emplace_back(encoder.tokenize_as(TextRole::passage, t));
    text::Encoding plain;               // without special tokens, as sentence_spans reads them
    std::vector<std::size_t> position;  // plain token -> model token
    for (std::size_t j = 0; j < model_tokens.size(); ++j) {
      if (model_tokens.special_tokens_mask[j]) continue;
      plain.ids.push_back(model_tokens.ids[j]);
      plain.type_ids.push_back(model_tokens.type_ids[j]);
      plain.offsets.push_back(model_tokens.offsets[j]);
      plain.special_tokens_mask.push_back(0);
      position.push_back(j);
    }
    auto& chunk_spans = spans.emplace_back(text::sentence_spans(t, plain));
    auto& chunk_ranges = ranges.emplace_back();
    for (const auto& s : chunk_spans) chunk_ranges.push_back({position[s.first_token], position[s.last_token - 1] + 1});
  }
  auto pooled = encoder.embed_encoded_with_ranges(encodings, ranges);
  if (!pooled && pooled.error().code == ErrorCode::unsupported) {
    // A model that reads one vector off one token (CLS pooling) embeds each sentence as a text of
    // its own, in the same run as the chunks: more work, but extractive answers still have vectors.
    std::size_t chunk_count = encodings.size();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      for (const auto& s : spans[i]) {
        encodings.push_back(
            encoder.tokenize_as(TextRole::passage, std::string_view(texts[i]).substr(s.begin, s.end - s.begin)));
      }
    }
    auto vectors = KOTAE_TRY_VALUE(encoder.embed_encoded(encodings));
    pooled = RangeEmbeddings{Embeddings{vectors.dimension, {}}, Embeddings{vectors.dimension, {}}};
    const auto split = vectors.values.begin() + static_cast<std::ptrdiff_t>(chunk_count * vectors.dimension);
    pooled->inputs.values.assign(vectors.values.begin(), split);
    pooled->ranges.values.assign(split, vectors.values.end());
  }
  if (!pooled) return pooled.error();
  EmbeddedChunks out{std::move(pooled->inputs), {}};
  std::size_t row = 0;
  for (const auto& chunk_spans : spans) {
    auto& sentences = out.sentences.emplace_back();
    for (const auto& s : chunk_spans) {
      sentences.push_back(
          {static_cast<std::uint32_t>(s.begin), static_cast<std::uint32_t>(s.end), pooled->ranges.row_copy(row++)});
    }
  }
  return out;
}

}  // namespace kotae::rag
