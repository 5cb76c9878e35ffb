#include "bench/sized_collection.h"

#include <cmath>
#include <random>
#include <vector>

namespace kotae::bench {

namespace {

struct SourceDocument {
  store::DocumentRecord record;
  std::vector<store::ChunkRecord> chunks;
  std::vector<float> vectors;
  std::vector<std::vector<store::SentenceVector>> sentences;
};

Result<std::vector<SourceDocument>> read_documents(const store::Collection& source) {
  auto records = source.documents();
  if (!records) return records.error();
  std::vector<SourceDocument> out;
  for (const auto& record : *records) {
    auto full = source.document(record.id);
    if (!full) return full.error();
    if (!*full) continue;  // removed meanwhile
    auto chunks = source.document_chunks(record.id);
    if (!chunks) return chunks.error();
    std::vector<std::int64_t> ids;
    for (const auto& c : *chunks) ids.push_back(c.id);
    auto vectors = source.embeddings(ids);
    if (!vectors) return vectors.error();
    auto sentences = source.chunk_sentences(ids);
    if (!sentences) return sentences.error();
    out.push_back({**full, std::move(*chunks), std::move(*vectors), std::move(*sentences)});
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<store::Collection>> grow_collection(const store::Collection& source,
                                                           const std::filesystem::path& target, std::size_t chunks,
                                                           unsigned seed) {
  auto documents = read_documents(source);
  if (!documents) return documents.error();
  std::vector<const float*> pool;  // every real vector, to blend copies with
  const std::size_t dim = source.info().dimension;
  for (const auto& d : *documents)
    for (std::size_t row = 0; row < d.chunks.size(); ++row) pool.push_back(d.vectors.data() + row * dim);
  if (pool.empty()) return make_error(ErrorCode::invalid_argument, "the source collection has no chunks");

  std::error_code ec;
  std::filesystem::remove_all(target, ec);
  auto collection = store::Collection::open_or_create(target, source.info());
  if (!collection) return collection.error();

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> weight(0.3f, 0.7f);
  std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
  std::size_t stored = 0;
  for (std::size_t copy = 0; stored < chunks; ++copy) {
    for (const auto& d : *documents) {
      if (stored >= chunks) break;
      store::DocumentRecord record = d.record;
      std::vector<float> vectors = d.vectors;
      if (copy) {
        record.path += "#copy-" + std::to_string(copy);
        for (std::size_t row = 0; row < d.chunks.size(); ++row) {
          float* v = vectors.data() + row * dim;
          const float* a = pool[pick(rng)];
          const float* b = pool[pick(rng)];
          const float w = weight(rng);
          double norm = 0;
          for (std::size_t j = 0; j < dim; ++j) {
            v[j] = w * a[j] + (1 - w) * b[j];
            norm += double(v[j]) * v[j];
          }
          for (std::size_t j = 0; j < dim; ++j) v[j] = static_cast<float>(v[j] / std::sqrt(norm));
        }
      }
      if (auto put = (*collection)->put_document(record, d.chunks, vectors, d.sentences); !put) return put.error();
      stored += d.chunks.size();
    }
  }
  if (auto saved = (*collection)->save_vector_index(); !saved) return saved.error();
  return std::move(*collection);
}

}  // namespace kotae::bench
