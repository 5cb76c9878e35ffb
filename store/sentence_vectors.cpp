#include "store/sentence_vectors.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kotae::store {
namespace {

template <class T>
void put(std::vector<std::byte>& out, T value) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

template <class T>
T take(std::span<const std::byte> blob, std::size_t& at) {
  T value;
  std::memcpy(&value, blob.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

}  // namespace

std::vector<std::byte> encode_sentence_vectors(std::span<const SentenceVector> sentences, std::size_t dimension) {
  std::vector<std::byte> out;
  if (sentences.empty()) return out;
  out.reserve(4 + sentences.size() * (12 + dimension));
  put(out, static_cast<std::uint32_t>(sentences.size()));
  for (const auto& s : sentences) {
    float largest = 0;
    for (std::size_t h = 0; h < dimension; ++h) largest = std::max(largest, std::abs(s.vector[h]));
    const float scale = largest > 0 ? largest / 127.0f : 1.0f;
    put(out, s.begin);
    put(out, s.end);
    put(out, scale);
    for (std::size_t h = 0; h < dimension; ++h) {
      put(out, static_cast<std::int8_t>(std::lround(std::clamp(s.vector[h] / scale, -127.0f, 127.0f))));
    }
  }
  return out;
}

Result<std::vector<SentenceVector>> decode_sentence_vectors(std::span<const std::byte> blob, std::size_t dimension) {
  std::vector<SentenceVector> out;
  if (blob.empty()) return out;
  const std::size_t per_sentence = 12 + dimension;
  if (blob.size() < 4) return make_error(ErrorCode::corrupt, "sentence vectors: truncated header");
  std::size_t at = 0;
  const auto count = take<std::uint32_t>(blob, at);
  if (blob.size() != 4 + count * per_sentence) {
    return make_error(ErrorCode::corrupt, "sentence vectors: " + std::to_string(blob.size()) + " bytes for " +
                                              std::to_string(count) + " sentences of dimension " +
                                              std::to_string(dimension));
  }
  out.resize(count);
  for (auto& s : out) {
    s.begin = take<std::uint32_t>(blob, at);
    s.end = take<std::uint32_t>(blob, at);
    const auto scale = take<float>(blob, at);
    s.vector.resize(dimension);
    for (std::size_t h = 0; h < dimension; ++h) s.vector[h] = static_cast<float>(take<std::int8_t>(blob, at)) * scale;
  }
  return out;
}

}  // namespace kotae::store
