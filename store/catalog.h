#pragma once
// Where a deployment's collections are, by tenant and name: a folder of SQLite collections (the
// embedded default: DIR/collections/NAME for the local tenant, DIR/tenants/T/collections/NAME for the
// others), or one PostgreSQL database that several replicas share. Commands and the server open,
// list, create and delete collections through it and need not know which.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/collection.h"

namespace kotae::store {

inline constexpr const char* kLocalTenant = "local";

struct CatalogOptions {
  // "postgres://…" (or postgresql://), a folder, or empty: `data_dir` (--store, KOTAE_STORE).
  std::string store;
  std::filesystem::path data_dir;
  // PostgreSQL: this machine's folder for each collection's vector snapshot (and other local files);
  // empty: DATA/index-cache (--index-cache).
  std::filesystem::path index_cache;
};

// Letters, digits, '.', '_' and '-', not starting with '.', at most 100 characters: a collection's or
// a tenant's name, safe as a folder name.
bool valid_collection_name(const std::string& name);

class Catalog {
 public:
  static Result<std::unique_ptr<Catalog>> open(const CatalogOptions& options);
  virtual ~Catalog() = default;

  // Whether other processes on other machines write the same collections: then a server follows
  // the change log (store/change_follower.h) rather than counting on its searches to notice.
  virtual bool shared() const = 0;
  // The connection string a follower listens on (shared catalogs only).
  virtual const std::string& url() const = 0;
  // For messages and logs: the folder, or PostgreSQL's server and database (never a password).
  virtual const std::string& description() const = 0;

  virtual Result<std::vector<std::string>> tenants() = 0;  // those with at least one collection; local first
  virtual Result<std::vector<std::string>> names(const std::string& tenant) = 0;  // sorted
  virtual Result<bool> exists(const std::string& tenant, const std::string& name) = 0;
  // This machine's folder for the collection: the SQLite collection itself, or (PostgreSQL) the
  // place for its vector snapshot, uploads and writer lock. invalid_argument for a bad name.
  virtual Result<std::filesystem::path> folder(const std::string& tenant, const std::string& name) = 0;
  // Opens the collection, creating it with `create_with` when missing (null: not_found).
  virtual Result<std::unique_ptr<Collection>> open(const std::string& tenant, const std::string& name,
                                                   const CollectionInfo* create_with) = 0;
  // Its records alone, without the search indexes (copying into it needs none).
  virtual Result<std::unique_ptr<RecordStore>> open_records(const std::string& tenant, const std::string& name,
                                                            const CollectionInfo* create_with) = 0;
  // Deletes the collection's records (the caller has closed it, or is about to).
  virtual Result<void> remove(const std::string& tenant, const std::string& name) = 0;
  // Gives the collection a new name, with this machine's folder of it (the SQLite collection itself,
  // or PostgreSQL's index cache: its vector snapshot is named by the row's id and so still fits).
  // SQLite: the caller has closed it (its files are opened by path). PostgreSQL: one UPDATE, announced
  // on the change channel; other replicas' open copies find their name gone (RecordStore::last_change
  // is not_found) and close it. not_found when `from` is not there, already_exists when `to` is taken,
  // invalid_argument for a bad name.
  virtual Result<void> rename(const std::string& tenant, const std::string& from, const std::string& to) = 0;
  // What the collection takes in storage, in bytes (quotas).
  virtual Result<std::uintmax_t> stored_bytes(const std::string& tenant, const std::string& name) = 0;
};

}  // namespace kotae::store
