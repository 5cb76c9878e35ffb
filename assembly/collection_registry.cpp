#include "assembly/collection_registry.h"

#include <chrono>
#include <thread>

#include "core/log.h"
#include "core/random_id.h"
#include "core/remove_tree.h"
#include "text/chunker.h"

namespace kotae::assembly {

namespace fs = std::filesystem;

CollectionRegistry::CollectionRegistry(store::Catalog& catalog, ModelPool& models)
    : catalog_(catalog), models_(models) {}

std::uintmax_t CollectionRegistry::stored_bytes(const ServedCollection& collection) const {
  auto bytes = catalog_.stored_bytes(collection.tenant, collection.name);
  return bytes ? *bytes : 0;
}

CollectionRegistry::Usage CollectionRegistry::usage(const std::string& tenant) {
  Usage total;
  auto listed = names(tenant);
  for (const auto& name : listed ? *listed : std::vector<std::string>{}) {
    auto opened = get(tenant, name);
    if (!opened) continue;
    total.bytes += stored_bytes(**opened);
    total.documents += (*opened)->store->document_count();
  }
  return total;
}

namespace {

Error no_collection(const std::string& name) {
  return make_error(ErrorCode::not_found, "no collection '" + name + "' (create it with POST /v1/collections)");
}

// Everything a request needs beside the store: the collection's embedder, queries and bulk.
Result<std::shared_ptr<ServedCollection>> serve(ModelPool& models, const std::string& tenant, const std::string& name,
                                                const std::string& model, std::unique_ptr<store::Collection> store,
                                                fs::path folder) {
  auto served = std::make_shared<ServedCollection>();
  served->tenant = tenant;
  served->name = name;
  served->instance = random_id("");
  served->embedder_model = model;
  served->encoder = KOTAE_TRY_VALUE(models.encoder(model));
  served->bulk_encoder = *models.bulk_encoder(model);
  served->store = std::move(store);
  served->folder = std::move(folder);
  return served;
}

}  // namespace

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::open_locked(const std::string& tenant,
                                                                          const std::string& name) {
  if (auto it = open_.find({tenant, name}); it != open_.end()) return it->second;
  fs::path folder = KOTAE_TRY_VALUE(catalog_.folder(tenant, name));
  if (removing_.contains({tenant, name}) || !KOTAE_TRY_VALUE(catalog_.exists(tenant, name))) return no_collection(name);
  const auto opening = std::chrono::steady_clock::now();
  auto store = catalog_.open(tenant, name, nullptr);
  if (!store) return store.error().code == ErrorCode::not_found ? no_collection(name) : store.error();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - opening).count();
  const auto& because = (*store)->vector_index_rebuilt_because();
  if (!because.empty()) {
    log_event("vector_index_rebuilt",
              {{"tenant", tenant},
               {"collection", name},
               {"reason", because},
               {"chunks", (*store)->chunk_count()},
               {"ms", ms}},
              LogLevel::warn);
  }
  log_event("collection_opened", {{"tenant", tenant},
                                  {"collection", name},
                                  {"chunks", (*store)->chunk_count()},
                                  {"vectors", because.empty() ? "loaded" : "rebuilt"},
                                  {"ms", ms}});
  const auto& id = (*store)->info().embedder_id;
  // "all-minilm-l6-v2/fp32" was built by all-minilm-l6-v2
  auto served =
      KOTAE_TRY_VALUE(serve(models_, tenant, name, id.substr(0, id.find('/')), std::move(*store), std::move(folder)));
  open_[{tenant, name}] = served;
  return served;
}

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::get(const std::string& tenant, const std::string& name) {
  std::lock_guard lock(mutex_);
  return open_locked(tenant, name);
}

std::vector<std::shared_ptr<ServedCollection>> CollectionRegistry::open_all() {
  std::vector<std::shared_ptr<ServedCollection>> opened_all;
  auto tenants = catalog_.tenants();
  if (!tenants) {
    log_event("collections_unavailable", {{"store", catalog_.description()}, {"reason", tenants.error().message}},
              LogLevel::warn);
    return opened_all;
  }
  for (const auto& tenant : *tenants) {
    auto listed = names(tenant);
    for (const auto& name : listed ? *listed : std::vector<std::string>{}) {
      std::lock_guard lock(mutex_);
      // A collection that cannot open stays closed; its requests get the error, the others are served.
      if (auto opened = open_locked(tenant, name); !opened) {
        log_event("collection_unavailable",
                  {{"tenant", tenant}, {"collection", name}, {"reason", opened.error().message}}, LogLevel::warn);
      } else {
        opened_all.push_back(*opened);
      }
    }
  }
  return opened_all;
}

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::create(const std::string& tenant,
                                                                     const NewCollection& spec) {
  fs::path folder = KOTAE_TRY_VALUE(catalog_.folder(tenant, spec.name));
  // The embedder may have to load first: not while holding the registry, which every request reads.
  const std::string model = spec.embedder.empty() ? models_.default_embedder() : spec.embedder;
  auto encoder = KOTAE_TRY_VALUE(models_.encoder(model));
  std::lock_guard lock(mutex_);
  if (open_.contains({tenant, spec.name}) || removing_.contains({tenant, spec.name}) ||
      KOTAE_TRY_VALUE(catalog_.exists(tenant, spec.name))) {
    return make_error(ErrorCode::already_exists, "a collection named '" + spec.name + "' exists already");
  }
  text::ChunkerOptions chunking;
  store::CollectionInfo info{encoder->id(), encoder->dimension(),
                             spec.chunk_tokens ? spec.chunk_tokens : chunking.max_tokens,
                             spec.chunk_tokens || spec.overlap_tokens ? spec.overlap_tokens : chunking.overlap_tokens};
  auto store = KOTAE_TRY_VALUE(catalog_.open(tenant, spec.name, &info));
  auto served = KOTAE_TRY_VALUE(serve(models_, tenant, spec.name, model, std::move(store), std::move(folder)));
  open_[{tenant, spec.name}] = served;
  return served;
}

Result<std::vector<std::string>> CollectionRegistry::names(const std::string& tenant) const {
  return catalog_.names(tenant);
}

Result<void> CollectionRegistry::remove(const std::string& tenant, const std::string& name) {
  std::shared_ptr<ServedCollection> served;
  {
    std::lock_guard lock(mutex_);
    served = KOTAE_TRY_VALUE(open_locked(tenant, name));
    open_.erase({tenant, name});
    removing_.insert({tenant, name});
  }
  // A running ingestion stops at its next file; searches that still hold the collection keep their
  // open files. Until it is gone the name is neither opened again nor created.
  served->deleted = true;
  std::lock_guard writing(served->writer);
  served->generation++;
  auto removed = catalog_.remove(tenant, name);
  auto local = remove_tree(served->folder);  // this machine's files of it (the collection itself, for SQLite)
  std::lock_guard lock(mutex_);
  removing_.erase({tenant, name});
  if (!removed) return removed.error();
  return local;
}

Result<std::shared_ptr<ServedCollection>> CollectionRegistry::rename(const std::string& tenant, const std::string& from,
                                                                     const std::string& to, const RenameSteps& steps) {
  KOTAE_TRY(catalog_.folder(tenant, to));  // a bad name is refused before anything else
  std::shared_ptr<ServedCollection> served;
  {
    std::lock_guard lock(mutex_);
    served = KOTAE_TRY_VALUE(open_locked(tenant, from));
    if (open_.contains({tenant, to}) || removing_.contains({tenant, to}) ||
        KOTAE_TRY_VALUE(catalog_.exists(tenant, to))) {
      return make_error(ErrorCode::already_exists, "a collection named '" + to + "' exists already");
    }
    open_.erase({tenant, from});
    removing_.insert({tenant, from});
    removing_.insert({tenant, to});
  }
  auto release = [&](bool reopen_old) {
    std::lock_guard lock(mutex_);
    removing_.erase({tenant, from});
    removing_.erase({tenant, to});
    if (reopen_old && !open_.contains({tenant, from})) open_[{tenant, from}] = served;
  };
  {
    // An ingestion or a removal under way finishes first; then the requests that hold it (this
    // function's `served` is the one reference left when they have).
    std::lock_guard writing(served->writer);
    const auto deadline = std::chrono::steady_clock::now() + kRenameWait;
    while (served.use_count() > 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (served.use_count() > 1) {
      release(true);
      return make_error(ErrorCode::unavailable, "collection '" + from + "' is still in use; try the rename again");
    }
  }
  if (steps.before) {
    if (auto before = steps.before(); !before) {
      release(true);
      return before.error();
    }
  }
  // Closed before it moves: SQLite opens its WAL and journal by path. Cached answers name its instance
  // and generation, and the new opening has another instance.
  served->deleted = true;
  served->generation++;
  served.reset();
  if (auto moved = catalog_.rename(tenant, from, to); !moved) {
    if (steps.undo_before) steps.undo_before();
    release(false);  // the old name opens again on demand, from the catalog
    return moved.error();
  }
  log_event("collection_renamed", {{"tenant", tenant}, {"collection", from}, {"to", to}});
  if (steps.after) steps.after();
  std::lock_guard lock(mutex_);
  removing_.erase({tenant, from});
  removing_.erase({tenant, to});
  return open_locked(tenant, to);
}

void CollectionRegistry::follow_changes() {
  std::vector<std::shared_ptr<ServedCollection>> open;
  {
    std::lock_guard lock(mutex_);
    for (const auto& entry : open_) open.push_back(entry.second);
  }
  for (const auto& c : open) {
    const std::int64_t before = c->store->change_position();
    auto caught_up = c->store->catch_up();
    if (!caught_up && caught_up.error().code == ErrorCode::not_found) {  // deleted by another replica
      std::lock_guard lock(mutex_);
      if (auto it = open_.find({c->tenant, c->name}); it != open_.end() && it->second == c) open_.erase(it);
      c->deleted = true;
      c->generation++;
      log_event("collection_closed",
                {{"tenant", c->tenant}, {"collection", c->name}, {"reason", "deleted or renamed elsewhere"}});
      continue;
    }
    if (!caught_up) {
      log_event("catch_up_failed",
                {{"tenant", c->tenant}, {"collection", c->name}, {"reason", caught_up.error().message}},
                LogLevel::warn);
      continue;
    }
    if (c->store->change_position() != before) c->generation++;  // cached answers of the old contents go
  }
}

}  // namespace kotae::assembly
