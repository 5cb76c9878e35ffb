#pragma once
// What the rest of Kotae sees of a sentence embedding model: text in, unit vectors out. Tokenisation
// is separate from running the model so callers (and the batcher) can tokenise on their own threads.

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "text/tokenizer.h"

namespace kotae {

// Row-major vectors, `dimension` floats each.
struct Embeddings {
  std::size_t dimension = 0;
  std::vector<float> values;

  std::size_t size() const { return dimension ? values.size() / dimension : 0; }
  std::span<const float> row(std::size_t i) const { return {values.data() + i * dimension, dimension}; }
  std::vector<float> row_copy(std::size_t i) const { return {row(i).begin(), row(i).end()}; }
};

// The dot product of two vectors (over the shorter's length): their cosine when both are unit length,
// as an encoder's normalised vectors are.
inline float dot(std::span<const float> a, std::span<const float> b) {
  float sum = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// Tokens [first, last) of one input (special tokens counted), pooled into a vector of their own.
struct TokenRange {
  std::size_t first = 0, last = 0;
};

// Which side of a search a text is on. Models trained with instructions want each side marked: e5
// reads "query: " and "passage: ", bge a retrieval instruction before queries (its manifest says).
enum class TextRole { query, passage };

struct TextPrefixes {
  std::string query, passage;
};

struct RangeEmbeddings {
  Embeddings inputs;  // one row per input, as embed_encoded gives
  Embeddings ranges;  // one row per range: input 0's ranges in order, then input 1's, ...
};

class Encoder {
 public:
  virtual ~Encoder() = default;

  virtual std::size_t dimension() const = 0;
  // Names the model and the precision it was published in, e.g. "all-minilm-l6-v2/fp32"; a collection
  // records it. Running the model at another precision (precision()) keeps the id.
  virtual std::string id() const = 0;
  // What this run computes in ("fp32", "fp16", "int8"): one model may run at several precisions.
  virtual std::string precision() const = 0;
  virtual const std::string& provider() const = 0;

  // Tokens as the model will see them: special tokens added, truncated to its maximum length.
  virtual text::Encoding tokenize(std::string_view text) const = 0;
  // What the model wants before a query and before a passage; none by default.
  virtual const TextPrefixes& prefixes() const;
  // tokenize() of the role's prefix and the text. The prefix's tokens are marked special and their
  // offsets {0, 0}; the others' offsets stay those of `text`, so spans of it still map to tokens.
  text::Encoding tokenize_as(TextRole role, std::string_view text) const;
  // The tokenizer itself, for counting tokens without special tokens or truncation (the chunker).
  virtual const text::Tokenizer& tokenizer() const = 0;
  // Longest input the model reads, special tokens included; longer texts are truncated.
  virtual std::size_t max_length() const = 0;
  virtual Result<Embeddings> embed_encoded(std::span<const text::Encoding> encodings) const = 0;

  // embed_encoded without waiting, where the encoder has a thread of its own (the dynamic batcher's):
  // `done` then runs on that thread, so it must not block. An encoder without one answers before
  // returning (this default).
  using EmbeddingsDone = std::function<void(Result<Embeddings>)>;
  virtual void embed_encoded_async(std::vector<text::Encoding> encodings, EmbeddingsDone done) const {
    done(embed_encoded(encodings));
  }

  // embed_encoded, plus a vector per range pooled from the same run's token states: a sentence's
  // vector from tokens that saw its whole chunk ("late chunking"), at no extra model cost. Encoders
  // that cannot pool a part of their input (CLS pooling) answer `unsupported`.
  virtual Result<RangeEmbeddings> embed_encoded_with_ranges(std::span<const text::Encoding> encodings,
                                                            std::span<const std::vector<TokenRange>> ranges) const;

  // The pooled vectors without the scaling to unit length (TEI's normalize: false), where the model
  // has them (mean or CLS pooling on ONNX Runtime); `unsupported` otherwise. Not batched with others.
  virtual Result<Embeddings> embed_encoded_unnormalized(std::span<const text::Encoding> encodings) const;

  Result<Embeddings> embed(std::span<const std::string> texts, TextRole role) const;
};

}  // namespace kotae
