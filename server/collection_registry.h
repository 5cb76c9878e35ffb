#pragma once
// The collections the server has open, per tenant. The local tenant's collections are the CLI's
// (DATA/collections/NAME); another tenant's live in DATA/tenants/TENANT/collections/NAME, so no name
// a tenant can choose reaches another's. A collection is opened once and shared by every request.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/collection_request.h"  // NewCollection
#include "server/model_pool.h"
#include "store/collection.h"

namespace kotae::server {

inline constexpr const char* kLocalTenant = "local";

struct ServedCollection {
  std::string tenant;
  std::string name;
  std::unique_ptr<store::Collection> store;
  std::shared_ptr<const Encoder> encoder;       // the collection's embedder, batched (queries)
  std::shared_ptr<const Encoder> bulk_encoder;  // the same at bulk priority (ingestion)
  std::string embedder_model;
  std::string instance;                    // random, per opening: cached answers name it, so a collection
                                           // deleted and created again under the same name never meets them
  std::mutex writer;                       // one ingestion or removal at a time
  std::atomic<bool> deleted{false};        // set when removal begins: a running job stops at its next file
  std::atomic<std::uint64_t> generation{0};  // bumped by every change: cached answers name the one they saw
};

class CollectionRegistry {
 public:
  CollectionRegistry(std::filesystem::path data_dir, ModelPool& models);

  std::filesystem::path root(const std::string& tenant) const;
  // not_found when there is none (and the message says how to create one).
  Result<std::shared_ptr<ServedCollection>> get(const std::string& tenant, const std::string& name);
  // Opens every collection of every tenant (at start: a vector index that must be rebuilt is rebuilt
  // then, and logged, not during someone's first question); failures are logged and left closed.
  // Returns the ones opened.
  std::vector<std::shared_ptr<ServedCollection>> open_all();
  // already_exists when the name is taken.
  Result<std::shared_ptr<ServedCollection>> create(const std::string& tenant, const NewCollection& spec);
  Result<std::vector<std::string>> names(const std::string& tenant) const;
  // What the tenant's collections hold now: their folders' bytes on disk and their documents.
  struct Usage {
    std::uintmax_t bytes = 0;
    std::uint64_t documents = 0;
  };
  Usage usage(const std::string& tenant);
  // Closes it and deletes its folder once no request uses it. not_found when there is none.
  Result<void> remove(const std::string& tenant, const std::string& name);

 private:
  Result<std::filesystem::path> dir_of(const std::string& tenant, const std::string& name) const;
  Result<std::shared_ptr<ServedCollection>> open_locked(const std::string& tenant, const std::string& name);

  std::filesystem::path data_dir_;
  ModelPool& models_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ServedCollection>> open_;
  // Being removed: not opened again until its folder is gone (a request meanwhile gets not_found).
  std::set<std::pair<std::string, std::string>> removing_;
};

// Letters, digits, '.', '_' and '-', not starting with '.', at most 100 characters.
bool valid_name(const std::string& name);

// The bytes of the regular files below `dir`.
std::uintmax_t folder_bytes(const std::filesystem::path& dir);

}  // namespace kotae::server
