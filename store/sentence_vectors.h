#pragma once
// The sentences of a chunk with their vectors, stored beside the chunk: an extractive answer ranks
// sentences by similarity to the question without running a model. Vectors are kept as int8 with one
// scale each (a quarter of the floats' size; cosine errors around 1e-3, far below the gaps that
// decide a ranking).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/result.h"

namespace kotae::store {

struct SentenceVector {
  std::uint32_t begin = 0, end = 0;  // bytes of the chunk's text
  std::vector<float> vector;         // unit length, the collection's dimension
};

// Layout: u32 count, then per sentence u32 begin, u32 end, f32 scale, `dimension` int8 values.
std::vector<std::byte> encode_sentence_vectors(std::span<const SentenceVector> sentences, std::size_t dimension);
// The stored form back (vectors dequantised); corrupt when the bytes do not have the layout.
Result<std::vector<SentenceVector>> decode_sentence_vectors(std::span<const std::byte> blob, std::size_t dimension);

}  // namespace kotae::store
