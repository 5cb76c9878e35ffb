#include "cli/collection_access.h"

#include <cstdio>

#include "core/paths.h"
#include "model/encoder_loading.h"

namespace kotae::cli {
namespace {

namespace fs = std::filesystem;

// "all-minilm-l6-v2-int8/int8" was built by the model in DATA/models/all-minilm-l6-v2-int8.
std::string model_of(const std::string& embedder_id) { return embedder_id.substr(0, embedder_id.find('/')); }

Result<std::unique_ptr<Encoder>> load_encoder(const fs::path& data_dir, const std::string& model) {
  return load_best_encoder(models_dir(data_dir) / model);
}

}  // namespace

Result<fs::path> collection_dir(const fs::path& data_dir, const std::string& name) {
  const bool valid = !name.empty() && name.size() <= 100 && name[0] != '.' &&
                     name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                         std::string::npos;
  if (!valid)
    return make_error(ErrorCode::invalid_argument, "collection name '" + name +
                                                       "': use letters, digits, '.', '_' and '-' (not starting with '.')");
  return data_dir / "collections" / name;
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

Result<OpenCollection> open_for_indexing(const fs::path& data_dir, const std::string& name, const std::string& model,
                                         std::size_t chunk_tokens, std::size_t overlap_tokens, std::chrono::seconds wait) {
  auto dir = collection_dir(data_dir, name);
  if (!dir) return dir.error();
  std::error_code created;
  fs::create_directories(*dir, created);
  if (created) return make_error(ErrorCode::io, "cannot create " + dir->string() + ": " + created.message());
  auto lock = lock_for_writing(*dir, name, "kotae index", wait);
  if (!lock) return lock.error();
  std::string model_name = model;
  if (model_name.empty()) {
    // An existing collection keeps its embedder; a new one gets the default.
    model_name = kDefaultEmbeddingModel;
    if (fs::exists(*dir / "kotae.db")) {
      auto existing = store::Collection::open(*dir);
      if (!existing) return existing.error();
      model_name = model_of((*existing)->info().embedder_id);
    }
  }
  auto encoder = load_encoder(data_dir, model_name);
  if (!encoder) return encoder.error();
  store::CollectionInfo info{(*encoder)->id(), (*encoder)->dimension(), chunk_tokens, overlap_tokens};
  auto collection = store::Collection::open_or_create(*dir, info);
  if (!collection) return collection.error();
  tell_of_rebuild(**collection, name);
  return OpenCollection{std::move(*lock), std::move(*collection), std::move(*encoder)};
}

Result<OpenCollection> open_for_search(const fs::path& data_dir, const std::string& name, bool with_encoder) {
  auto dir = collection_dir(data_dir, name);
  if (!dir) return dir.error();
  if (!fs::exists(*dir / "kotae.db"))
    return make_error(ErrorCode::not_found, "no collection '" + name + "' in " + (data_dir / "collections").string() +
                                                " (create it with: kotae index PATH --collection " + name + ")");
  auto collection = store::Collection::open(*dir);
  if (!collection) return collection.error();
  tell_of_rebuild(**collection, name);
  OpenCollection open{std::nullopt, std::move(*collection), nullptr};
  if (with_encoder) {
    auto encoder = load_encoder(data_dir, model_of(open.collection->info().embedder_id));
    if (!encoder) return encoder.error();
    open.encoder = std::move(*encoder);
  }
  return open;
}

Result<std::unique_ptr<PairScorer>> load_reranker(const fs::path& data_dir, const std::string& model) {
  if (model.empty()) return std::unique_ptr<PairScorer>();
  return load_best_cross_encoder(models_dir(data_dir) / model);
}

int report_error(const Error& error) {
  std::fprintf(stderr, "kotae: %s\n", error.message.c_str());
  switch (error.code) {
    case ErrorCode::invalid_argument:
    case ErrorCode::not_found:
    case ErrorCode::already_exists:
    case ErrorCode::unsupported: return 2;
    default: return 3;
  }
}

}  // namespace kotae::cli
