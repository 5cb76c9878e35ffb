#pragma once
// The collections the server has open, per tenant, from the store's catalog (store/catalog.h: SQLite
// folders, or PostgreSQL shared with other replicas). A collection is opened once and shared by every
// request. Over a shared store, follow_changes() brings every open collection up to the others'
// commits (the change follower calls it) and closes the ones another replica deleted.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "assembly/model_pool.h"
#include "assembly/new_collection.h"
#include "core/result.h"
#include "store/catalog.h"
#include "store/collection.h"

namespace kotae::assembly {

struct ServedCollection {
  std::string tenant;
  std::string name;
  std::unique_ptr<store::Collection> store;
  std::filesystem::path folder;                 // this machine's files of it: uploads, job records, writer lock
  std::shared_ptr<const Encoder> encoder;       // the collection's embedder, batched (queries)
  std::shared_ptr<const Encoder> bulk_encoder;  // the same at bulk priority (ingestion)
  std::string embedder_model;
  std::string instance;                      // random, per opening: cached answers name it, so a collection
                                             // deleted and created again under the same name never meets them
  std::mutex writer;                         // one ingestion or removal at a time
  std::atomic<bool> deleted{false};          // set when removal begins: a running job stops at its next file
  std::atomic<std::uint64_t> generation{0};  // bumped by every change: cached answers name the one they saw
};

// What else moves with a renamed collection (records kept by other stores under its name), run while
// the registry holds both names: neither is opened nor created meanwhile.
struct RenameSteps {
  // Before the collection moves; a failure stops the rename with nothing moved (its members are copied
  // to the new name here, so the collection is never without them).
  std::function<Result<void>()> before;
  // The move failed after `before` succeeded: undo it.
  std::function<void()> undo_before;
  // After the move (conversations and job records renamed, the old name's members removed).
  std::function<void()> after;
};

class CollectionRegistry {
 public:
  // How long a rename waits for the requests that use the collection to finish.
  static constexpr std::chrono::seconds kRenameWait{30};

  CollectionRegistry(store::Catalog& catalog, ModelPool& models);

  const store::Catalog& catalog() const { return catalog_; }
  // not_found when there is none (and the message says how to create one).
  Result<std::shared_ptr<ServedCollection>> get(const std::string& tenant, const std::string& name);
  // Opens every collection of every tenant (at start: a vector index that must be rebuilt is rebuilt
  // then, and logged, not during someone's first question); failures are logged and left closed.
  // Returns the ones opened.
  std::vector<std::shared_ptr<ServedCollection>> open_all();
  // already_exists when the name is taken.
  Result<std::shared_ptr<ServedCollection>> create(const std::string& tenant, const NewCollection& spec);
  Result<std::vector<std::string>> names(const std::string& tenant) const;
  // What a collection takes in storage (its folder's bytes, or its rows in PostgreSQL).
  std::uintmax_t stored_bytes(const ServedCollection& collection) const;
  // What the tenant's collections hold now: their bytes in storage and their documents.
  struct Usage {
    std::uintmax_t bytes = 0;
    std::uint64_t documents = 0;
  };
  Usage usage(const std::string& tenant);
  // Closes it and deletes it (records and folder) once no request uses it. not_found when there is none.
  Result<void> remove(const std::string& tenant, const std::string& name);
  // Gives the collection a new name. Both names are held meanwhile: a request for either gets not_found,
  // a create of either already_exists. It is closed first (an ingestion or removal under way finishes,
  // requests that hold it finish, up to kRenameWait: past it `unavailable` and nothing changed), then
  // moved (store::Catalog::rename), then opened under its new name with a new instance, so no answer
  // cached under the old name is served. not_found, already_exists (the new name taken), or the move's
  // error (the old name then opens again as it was).
  Result<std::shared_ptr<ServedCollection>> rename(const std::string& tenant, const std::string& from,
                                                   const std::string& to, const RenameSteps& steps);
  // Over a shared store: every open collection catches up with what others committed (a change bumps
  // its generation, so cached answers are not served again); one another replica deleted is closed.
  void follow_changes();

 private:
  Result<std::shared_ptr<ServedCollection>> open_locked(const std::string& tenant, const std::string& name);

  store::Catalog& catalog_;
  ModelPool& models_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ServedCollection>> open_;
  // Being removed: not opened again until its folder is gone (a request meanwhile gets not_found).
  std::set<std::pair<std::string, std::string>> removing_;
};

}  // namespace kotae::assembly
