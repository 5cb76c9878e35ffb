#pragma once
// How commands find a collection and the models that go with it: collections are the local tenant's
// in the store's catalog (store/catalog.h: DATA/collections/NAME by default, or PostgreSQL with
// --store); a collection's embedding model is the one that built it (its id names the model folder in
// DATA/models).

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/result.h"
#include "model/cross_encoder.h"
#include "model/sentence_encoder.h"
#include "store/catalog.h"
#include "store/collection.h"
#include "store/writer_lock.h"

namespace kotae::assembly {

struct OpenCollection {
  std::optional<store::WriterLock> lock;  // held by writers; declared first, so released last
  std::unique_ptr<store::Collection> collection;
  std::unique_ptr<Encoder> encoder;
  std::filesystem::path folder;  // this machine's files of the collection (its writer lock)
};

// For writing: takes the collection's writer lock (waiting up to `wait` for another process that
// holds it, and saying so), then creates the collection with `model` (the default embedder when
// empty) and the chunking settings, or opens it; a `model` other than the one that built it is an error.
// The model runs at `precision` when given, else at the one load_best_encoder chooses.
Result<OpenCollection> open_for_indexing(const store::CatalogOptions& where, const std::string& name,
                                         const std::string& model, std::size_t chunk_tokens, std::size_t overlap_tokens,
                                         std::chrono::seconds wait,
                                         std::optional<EncoderOptions::Precision> precision = std::nullopt);
// The writer lock of an existing collection, as open_for_indexing takes it.
Result<store::WriterLock> lock_for_writing(const std::filesystem::path& dir, const std::string& name,
                                           std::string_view doing, std::chrono::seconds wait);
// For searching: the collection must exist; its own embedder is loaded unless `with_encoder` is false.
Result<OpenCollection> open_for_search(const store::CatalogOptions& where, const std::string& name,
                                       bool with_encoder = true);

// The embedding model in DATA/models/MODEL, unbatched: at `precision` when given, else at the one
// load_best_encoder chooses for this machine (best_precision).
Result<std::unique_ptr<Encoder>> load_encoder(const std::filesystem::path& data_dir, const std::string& model,
                                              std::optional<EncoderOptions::Precision> precision = std::nullopt);
Result<EncoderOptions::Precision> best_precision(const std::filesystem::path& data_dir, const std::string& model);

// The cross-encoder in DATA/models/MODEL; null (no reranking) when `model` is empty.
Result<std::unique_ptr<PairScorer>> load_reranker(const std::filesystem::path& data_dir, const std::string& model);

}  // namespace kotae::assembly
