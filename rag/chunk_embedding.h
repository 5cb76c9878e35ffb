#pragma once
// Chunks into vectors: one per chunk and one per sentence. When the encoder can pool a part of its
// input (mean pooling), a sentence's vector comes from the same model run (its tokens saw the whole
// chunk: "late chunking"); otherwise each sentence is embedded alone. Ingestion stores both;
// answering makes the sentences of chunks stored without them.

#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/encoder.h"
#include "store/sentence_vectors.h"

namespace kotae::rag {

struct EmbeddedChunks {
  Embeddings vectors;
  std::vector<std::vector<store::SentenceVector>> sentences;  // one list per chunk
};

Result<EmbeddedChunks> embed_chunks(const Encoder& encoder, std::span<const std::string> texts);

}  // namespace kotae::rag
