#include "server/collection_registry.h"

#include <chrono>

#include "server/conversation_store.h"  // random_id
#include "server/json_log.h"
#include "text/chunker.h"

namespace kotae::server {

namespace fs = std::filesystem;

bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name[0] != '.' &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == std::string::npos;
}

std::uintmax_t folder_bytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

CollectionRegistry::Usage CollectionRegistry::usage(const std::string& tenant) {
  Usage total;
  auto listed = names(tenant);
  for (const auto& name : listed ? *listed : std::vector<std::string>{}) {
    auto opened = get(tenant, name);
    if (!opened) continue;
    total.bytes += folder_bytes((*opened)->store->dir());
    total.documents += (*opened)->store->document_count();
  }
  return total;
}

CollectionRegistry::CollectionRegistry(fs::path data_dir, ModelPool& models)
    : data_dir_(std::move(data_dir)), models_(models) {}

fs::path CollectionRegistry::root(const std::string& tenant) const {
  return tenant == kLocalTenant ? data_dir_ / "collections" : data_dir_ / "tenants" / tenant / "collections";
}

Result<fs::path> CollectionRegistry::dir_of(const std::string& tenant, const std::string& name) const {
  if (!valid_name(name)) {
    return make_error(ErrorCode::invalid_argument,
                      "collection name '" + name + "': use letters, digits, '.', '_' and '-' (not starting with '.'), at most 100");
  }
  return root(tenant) / name;
}

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::open_locked(const std::string& tenant,
                                                                         const std::string& name) {
  if (auto it = open_.find({tenant, name}); it != open_.end()) return it->second;
  auto dir = dir_of(tenant, name);
  if (!dir) return dir.error();
  std::error_code ec;
  if (removing_.contains({tenant, name}) || !fs::exists(*dir / "kotae.db", ec)) {
    return make_error(ErrorCode::not_found, "no collection '" + name + "' (create it with POST /v1/collections)");
  }
  const auto opening = std::chrono::steady_clock::now();
  auto store = store::Collection::open(*dir);
  if (!store) return store.error();
  if (const auto& because = (*store)->vector_index_rebuilt_because(); !because.empty()) {
    log_event("vector_index_rebuilt",
              {{"tenant", tenant}, {"collection", name}, {"reason", because}, {"chunks", (*store)->chunk_count()},
               {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - opening).count()}});
  }
  auto served = std::make_shared<ServedCollection>();
  served->tenant = tenant;
  served->name = name;
  served->instance = random_id("");
  const auto& id = (*store)->info().embedder_id;
  served->embedder_model = id.substr(0, id.find('/'));  // "all-minilm-l6-v2/fp32" was built by all-minilm-l6-v2
  auto encoder = models_.encoder(served->embedder_model);
  if (!encoder) return encoder.error();
  served->encoder = *encoder;
  served->bulk_encoder = *models_.bulk_encoder(served->embedder_model);
  served->store = std::move(*store);
  open_[{tenant, name}] = served;
  return served;
}

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::get(const std::string& tenant, const std::string& name) {
  std::lock_guard lock(mutex_);
  return open_locked(tenant, name);
}

std::vector<std::shared_ptr<ServedCollection>> CollectionRegistry::open_all() {
  std::vector<std::shared_ptr<ServedCollection>> opened_all;
  std::vector<std::string> tenants = {kLocalTenant};
  std::error_code ec;
  for (fs::directory_iterator it(data_dir_ / "tenants", ec), end; !ec && it != end; it.increment(ec)) {
    tenants.push_back(it->path().filename().string());
  }
  for (const auto& tenant : tenants) {
    auto listed = names(tenant);
    for (const auto& name : listed ? *listed : std::vector<std::string>{}) {
      std::lock_guard lock(mutex_);
      // A collection that cannot open stays closed; its requests get the error, the others are served.
      if (auto opened = open_locked(tenant, name); !opened) {
        log_event("collection_unavailable", {{"tenant", tenant}, {"collection", name}, {"reason", opened.error().message}});
      } else {
        opened_all.push_back(*opened);
      }
    }
  }
  return opened_all;
}

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::create(const std::string& tenant, const NewCollection& spec) {
  auto dir = dir_of(tenant, spec.name);
  if (!dir) return dir.error();
  // The embedder may have to load first: not while holding the registry, which every request reads.
  const std::string model = spec.embedder.empty() ? models_.default_embedder() : spec.embedder;
  auto encoder = models_.encoder(model);
  if (!encoder) return encoder.error();
  std::lock_guard lock(mutex_);
  std::error_code ec;
  if (open_.contains({tenant, spec.name}) || removing_.contains({tenant, spec.name}) || fs::exists(*dir / "kotae.db", ec)) {
    return make_error(ErrorCode::already_exists, "a collection named '" + spec.name + "' exists already");
  }
  text::ChunkerOptions chunking;
  store::CollectionInfo info{(*encoder)->id(), (*encoder)->dimension(),
                             spec.chunk_tokens ? spec.chunk_tokens : chunking.max_tokens,
                             spec.chunk_tokens || spec.overlap_tokens ? spec.overlap_tokens : chunking.overlap_tokens};
  auto store = store::Collection::open_or_create(*dir, info);
  if (!store) return store.error();
  auto served = std::make_shared<ServedCollection>();
  served->tenant = tenant;
  served->name = spec.name;
  served->instance = random_id("");
  served->embedder_model = model;
  served->encoder = *encoder;
  served->bulk_encoder = *models_.bulk_encoder(model);
  served->store = std::move(*store);
  open_[{tenant, spec.name}] = served;
  return served;
}

Result<std::vector<std::string>> CollectionRegistry::names(const std::string& tenant) const {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path dir = root(tenant);
  if (!fs::exists(dir, ec)) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (valid_name(name) && fs::exists(it->path() / "kotae.db")) out.push_back(name);
  }
  if (ec) return make_error(ErrorCode::io, "cannot list " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

Result<void> CollectionRegistry::remove(const std::string& tenant, const std::string& name) {
  std::shared_ptr<ServedCollection> served;
  {
    std::lock_guard lock(mutex_);
    auto opened = open_locked(tenant, name);
    if (!opened) return opened.error();
    served = *opened;
    open_.erase({tenant, name});
    removing_.insert({tenant, name});
  }
  // A running ingestion stops at its next file; searches that still hold the collection keep their
  // open files. Until the folder is gone the name is neither opened again nor created.
  served->deleted = true;
  std::lock_guard writing(served->writer);
  served->generation++;
  std::error_code ec;
  const fs::path dir = served->store->dir();
  fs::remove_all(dir, ec);
  std::lock_guard lock(mutex_);
  removing_.erase({tenant, name});
  if (ec) return make_error(ErrorCode::io, "cannot delete " + dir.string() + ": " + ec.message());
  return {};
}

}  // namespace kotae::server
