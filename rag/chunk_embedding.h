#pragma once
// Chunks into vectors: one per chunk and, when the encoder can pool a part of its input, one per
// sentence from the same model run (its tokens saw the whole chunk: "late chunking"). Ingestion
// stores both; answering pools the sentences of chunks stored without them.

#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/encoder.h"
#include "store/sentence_vectors.h"

namespace kotae::rag {

struct EmbeddedChunks {
  Embeddings vectors;
  std::vector<std::vector<store::SentenceVector>> sentences;  // one list per chunk; empty when not poolable
};

Result<EmbeddedChunks> embed_chunks(const Encoder& encoder, std::span<const std::string> texts);

}  // namespace kotae::rag
