#include "assembly/collection_access.h"

#include <cstdio>

#include "core/log.h"
#include "core/paths.h"
#include "model/encoder_loading.h"

namespace kotae::assembly {
namespace {

namespace fs = std::filesystem;

// "all-minilm-l6-v2-int8/int8" was built by the model in DATA/models/all-minilm-l6-v2-int8.
std::string model_of(const std::string& embedder_id) {
  return embedder_id.substr(0, embedder_id.find('/'));
}

}  // namespace

Result<std::unique_ptr<Encoder>> load_encoder(const fs::path& data_dir, const std::string& model,
                                              std::optional<EncoderOptions::Precision> precision) {
  if (!precision) return load_best_encoder(models_dir(data_dir) / model);
  EncoderOptions options;
  options.precision = *precision;
  auto encoder = SentenceEncoder::load(models_dir(data_dir) / model, options);
  if (!encoder) return encoder.error();
  return std::unique_ptr<Encoder>(std::move(*encoder));
}

Result<EncoderOptions::Precision> best_precision(const fs::path& data_dir, const std::string& model) {
  return cpu_precision(models_dir(data_dir) / model);
}

namespace {

// A rebuild is safe but slow; whoever waited for it should know why.
void tell_of_rebuild(const store::Collection& collection, const std::string& name) {
  if (const auto& because = collection.vector_index_rebuilt_because(); !because.empty()) {
    std::fprintf(stderr, "note: rebuilt the vector index of collection '%s' from its database (%s)\n", name.c_str(),
                 because.c_str());
  }
}

}  // namespace

Result<store::WriterLock> lock_for_writing(const fs::path& dir, const std::string& name, std::string_view doing,
                                           std::chrono::seconds wait) {
  auto now = store::WriterLock::acquire(dir, doing, std::chrono::milliseconds(0));
  if (now || now.error().code != ErrorCode::overloaded || wait.count() == 0) return now;
  std::fprintf(stderr, "kotae: collection '%s' is being written by another process (%s); waiting up to %lld s\n",
               name.c_str(), store::WriterLock::holder(dir).c_str(), static_cast<long long>(wait.count()));
  return store::WriterLock::acquire(dir, doing, wait);
}

Result<OpenCollection> open_for_indexing(const store::CatalogOptions& where, const std::string& name,
                                         const std::string& model, std::size_t chunk_tokens, std::size_t overlap_tokens,
                                         std::chrono::seconds wait,
                                         std::optional<EncoderOptions::Precision> precision) {
  auto catalog = KOTAE_TRY_VALUE(store::Catalog::open(where));
  fs::path folder = KOTAE_TRY_VALUE(catalog->folder(store::kLocalTenant, name));
  std::error_code created;
  fs::create_directories(folder, created);
  if (created) return make_error(ErrorCode::io, "cannot create " + folder.string() + ": " + created.message());
  auto lock = KOTAE_TRY_VALUE(lock_for_writing(folder, name, "kotae index", wait));
  std::string model_name = model;
  if (model_name.empty()) {
    // An existing collection keeps its embedder; a new one gets the default.
    model_name = kDefaultEmbeddingModel;
    if (KOTAE_TRY_VALUE(catalog->exists(store::kLocalTenant, name))) {
      auto existing = KOTAE_TRY_VALUE(catalog->open(store::kLocalTenant, name, nullptr));
      model_name = model_of(existing->info().embedder_id);
    }
  }
  auto encoder = KOTAE_TRY_VALUE(load_encoder(where.data_dir, model_name, precision));
  store::CollectionInfo info{encoder->id(), encoder->dimension(), chunk_tokens, overlap_tokens};
  auto collection = KOTAE_TRY_VALUE(catalog->open(store::kLocalTenant, name, &info));
  tell_of_rebuild(*collection, name);
  return OpenCollection{std::move(lock), std::move(collection), std::move(encoder), std::move(folder)};
}

Result<OpenCollection> open_for_search(const store::CatalogOptions& where, const std::string& name, bool with_encoder) {
  auto catalog = KOTAE_TRY_VALUE(store::Catalog::open(where));
  fs::path folder = KOTAE_TRY_VALUE(catalog->folder(store::kLocalTenant, name));
  if (!KOTAE_TRY_VALUE(catalog->exists(store::kLocalTenant, name))) {
    return make_error(ErrorCode::not_found, "no collection '" + name + "' in " + catalog->description() +
                                                " (create it with: kotae index PATH --collection " + name + ")");
  }
  auto collection = KOTAE_TRY_VALUE(catalog->open(store::kLocalTenant, name, nullptr));
  tell_of_rebuild(*collection, name);
  OpenCollection open{std::nullopt, std::move(collection), nullptr, std::move(folder)};
  if (with_encoder) {
    open.encoder = KOTAE_TRY_VALUE(load_encoder(where.data_dir, model_of(open.collection->info().embedder_id)));
  }
  return open;
}

Result<std::unique_ptr<PairScorer>> load_reranker(const fs::path& data_dir, const std::string& model) {
  if (model.empty()) return std::unique_ptr<PairScorer>();
  return load_best_cross_encoder(models_dir(data_dir) / model);
}

}  // namespace kotae::assembly
