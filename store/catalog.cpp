#include "store/catalog.h"

#include <algorithm>

#include "core/remove_tree.h"
#include "store/postgres_connection.h"
#include "store/postgres_record_store.h"
#include "store/sqlite_record_store.h"

namespace kotae::store {

namespace fs = std::filesystem;

bool valid_collection_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name[0] != '.' &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos;
}

namespace {

Error bad_name(const std::string& name) {
  return make_error(
      ErrorCode::invalid_argument,
      "collection name '" + name + "': use letters, digits, '.', '_' and '-' (not starting with '.'), at most 100");
}

std::uintmax_t folder_bytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

// The local tenant's collections are the CLI's (ROOT/collections/NAME); another tenant's live in
// ROOT/tenants/TENANT/collections/NAME, so no name a tenant can choose reaches another's.
fs::path tenant_root(const fs::path& root, const std::string& tenant) {
  return tenant == kLocalTenant ? root / "collections" : root / "tenants" / tenant / "collections";
}

// The embedded default: SQLite collections in folders.
class FolderCatalog final : public Catalog {
 public:
  explicit FolderCatalog(fs::path root) : root_(std::move(root)), description_(root_.string()) {}

  bool shared() const override { return false; }
  const std::string& url() const override { return url_; }
  const std::string& description() const override { return description_; }

  Result<std::vector<std::string>> tenants() override {
    std::vector<std::string> tenants = {kLocalTenant};
    std::error_code ec;
    for (fs::directory_iterator it(root_ / "tenants", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string tenant = it->path().filename().string();
      if (tenant != kLocalTenant) tenants.push_back(tenant);
    }
    std::sort(tenants.begin() + 1, tenants.end());
    return tenants;
  }

  Result<std::vector<std::string>> names(const std::string& tenant) override {
    std::vector<std::string> out;
    std::error_code ec;
    const fs::path dir = tenant_root(root_, tenant);
    if (!fs::exists(dir, ec)) return out;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const auto name = it->path().filename().string();
      if (valid_collection_name(name) && fs::exists(it->path() / "kotae.db")) out.push_back(name);
    }
    if (ec) return make_error(ErrorCode::io, "cannot list " + dir.string() + ": " + ec.message());
    std::sort(out.begin(), out.end());
    return out;
  }

  Result<bool> exists(const std::string& tenant, const std::string& name) override {
    const fs::path dir = KOTAE_TRY_VALUE(folder(tenant, name));
    std::error_code ec;
    return fs::exists(dir / "kotae.db", ec);
  }

  Result<fs::path> folder(const std::string& tenant, const std::string& name) override {
    if (!valid_collection_name(name)) return bad_name(name);
    return tenant_root(root_, tenant) / name;
  }

  Result<std::unique_ptr<Collection>> open(const std::string& tenant, const std::string& name,
                                           const CollectionInfo* create_with) override {
    const fs::path dir = KOTAE_TRY_VALUE(folder(tenant, name));
    return create_with != nullptr ? Collection::open_or_create(dir, *create_with) : Collection::open(dir);
  }

  Result<std::unique_ptr<RecordStore>> open_records(const std::string& tenant, const std::string& name,
                                                    const CollectionInfo* create_with) override {
    return std::unique_ptr<RecordStore>(
        KOTAE_TRY_VALUE(SqliteRecordStore::open(KOTAE_TRY_VALUE(folder(tenant, name)), create_with)));
  }

  Result<void> remove(const std::string& tenant, const std::string& name) override {
    return remove_tree(KOTAE_TRY_VALUE(folder(tenant, name)));
  }

  Result<void> rename(const std::string& tenant, const std::string& from, const std::string& to) override {
    const fs::path source = KOTAE_TRY_VALUE(folder(tenant, from));
    const fs::path target = KOTAE_TRY_VALUE(folder(tenant, to));
    std::error_code ec;
    if (!fs::exists(source / "kotae.db", ec)) return make_error(ErrorCode::not_found, "no collection '" + from + "'");
    // Even a folder that holds no collection (left over, or someone's) is not written over.
    if (fs::exists(target, ec) || ec)
      return make_error(ErrorCode::already_exists, "a collection named '" + to + "' exists already");
    // Both in the tenant's collections folder: one rename(2), atomic, the database's WAL and
    // uploads/ moving with it.
    fs::rename(source, target, ec);
    if (ec)
      return make_error(ErrorCode::io,
                        "cannot rename " + source.string() + " to " + target.string() + ": " + ec.message());
    return {};
  }

  Result<std::uintmax_t> stored_bytes(const std::string& tenant, const std::string& name) override {
    return folder_bytes(KOTAE_TRY_VALUE(folder(tenant, name)));
  }

 private:
  fs::path root_;
  std::string description_;
  std::string url_;
};

// Every collection in one PostgreSQL database; this machine keeps a snapshot of each one's vectors
// in the index cache.
class PostgresCatalog final : public Catalog {
 public:
  PostgresCatalog(std::string url, fs::path index_cache, std::string description)
      : url_(std::move(url)),
        index_cache_(std::move(index_cache)),
        description_(std::move(description)),
        pool_(std::make_shared<PgPool>(url_)) {}

  bool shared() const override { return true; }
  const std::string& url() const override { return url_; }
  const std::string& description() const override { return description_; }

  Result<std::vector<std::string>> tenants() override {
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto rows = KOTAE_TRY_VALUE(
        lease->query("SELECT tenant FROM collections WHERE tenant <> $1 GROUP BY tenant ORDER BY tenant COLLATE \"C\"",
                     PgParams().add(std::string_view(kLocalTenant))));
    std::vector<std::string> tenants = {kLocalTenant};
    for (std::size_t i = 0; i < rows.rows(); ++i) tenants.emplace_back(rows.text(i, 0));
    return tenants;
  }

  Result<std::vector<std::string>> names(const std::string& tenant) override {
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto rows = KOTAE_TRY_VALUE(lease->query(
        "SELECT name FROM collections WHERE tenant = $1 ORDER BY name COLLATE \"C\"", PgParams().add(tenant)));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < rows.rows(); ++i) names.emplace_back(rows.text(i, 0));
    return names;
  }

  Result<bool> exists(const std::string& tenant, const std::string& name) override {
    if (!valid_collection_name(name)) return bad_name(name);
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto rows = KOTAE_TRY_VALUE(lease->query("SELECT 1::bigint FROM collections WHERE tenant = $1 AND name = $2",
                                             PgParams().add(tenant).add(name)));
    return rows.rows() > 0;
  }

  Result<fs::path> folder(const std::string& tenant, const std::string& name) override {
    if (!valid_collection_name(name)) return bad_name(name);
    return tenant_root(index_cache_, tenant) / name;
  }

  Result<std::unique_ptr<RecordStore>> open_records(const std::string& tenant, const std::string& name,
                                                    const CollectionInfo* create_with) override {
    if (!valid_collection_name(name)) return bad_name(name);
    return std::unique_ptr<RecordStore>(KOTAE_TRY_VALUE(PostgresRecordStore::open(pool_, tenant, name, create_with)));
  }

  Result<std::unique_ptr<Collection>> open(const std::string& tenant, const std::string& name,
                                           const CollectionInfo* create_with) override {
    const fs::path dir = KOTAE_TRY_VALUE(folder(tenant, name));
    auto records = KOTAE_TRY_VALUE(PostgresRecordStore::open(pool_, tenant, name, create_with));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      return make_error(ErrorCode::io, "cannot create the index cache folder " + dir.string() + ": " + ec.message());
    // Named by the records' id: a collection deleted and made again under the same name never loads
    // the old one's snapshot.
    const fs::path snapshot = dir / ("vectors-" + std::to_string(records->collection_id()) + ".index");
    return Collection::open(std::move(records), snapshot);
  }

  Result<void> remove(const std::string& tenant, const std::string& name) override {
    const fs::path dir = KOTAE_TRY_VALUE(folder(tenant, name));
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto removed = KOTAE_TRY_VALUE(lease->query("DELETE FROM collections WHERE tenant = $1 AND name = $2 RETURNING id",
                                                PgParams().add(tenant).add(name)));
    if (removed.rows() > 0) {
      // Every replica drops it at once rather than at its next periodic check.
      KOTAE_TRY(lease->query(
          "SELECT pg_notify($1, $2)",
          PgParams().add(std::string_view(kChangeChannel)).add(std::to_string(removed.int64(0, 0)) + " removed")));
    }
    std::error_code ec;
    fs::remove_all(dir, ec);  // this machine's snapshot; other machines' go with their next cleanup
    return {};
  }

  Result<void> rename(const std::string& tenant, const std::string& from, const std::string& to) override {
    const fs::path source = KOTAE_TRY_VALUE(folder(tenant, from));
    const fs::path target = KOTAE_TRY_VALUE(folder(tenant, to));
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    // The unique (tenant, name) key refuses a taken name: already_exists.
    auto renamed =
        KOTAE_TRY_VALUE(lease->query("UPDATE collections SET name = $1 WHERE tenant = $2 AND name = $3 RETURNING id",
                                     PgParams().add(to).add(tenant).add(from)));
    if (renamed.rows() == 0) return make_error(ErrorCode::not_found, "no collection '" + from + "'");
    // Documents, chunks, the change log and kept files name the row by id and stay as they are. Every
    // replica hears of it at once rather than at its next periodic check.
    KOTAE_TRY(lease->query(
        "SELECT pg_notify($1, $2)",
        PgParams().add(std::string_view(kChangeChannel)).add(std::to_string(renamed.int64(0, 0)) + " renamed")));
    // This machine's snapshot moves along (named by the id, it still fits); on failure the new name's
    // first opening rebuilds it from the embeddings, and the old folder goes as a deleted one's does.
    std::error_code ec;
    if (fs::exists(source, ec) && !fs::exists(target, ec)) {
      fs::create_directories(target.parent_path(), ec);
      fs::rename(source, target, ec);
    }
    return {};
  }

  Result<std::uintmax_t> stored_bytes(const std::string& tenant, const std::string& name) override {
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto rows = KOTAE_TRY_VALUE(lease->query(  // its documents' rows and the uploaded files kept with them
        "SELECT ((SELECT coalesce(sum(d.stored_bytes), 0) FROM documents d WHERE d.collection_id = k.id) + "
        "(SELECT coalesce(sum(octet_length(f.bytes)), 0) FROM document_files f WHERE f.collection_id = k.id))::bigint "
        "FROM collections k WHERE k.tenant = $1 AND k.name = $2",
        PgParams().add(tenant).add(name)));
    return rows.rows() ? static_cast<std::uintmax_t>(rows.int64(0, 0)) : 0;
  }

 private:
  std::string url_;
  fs::path index_cache_;
  std::string description_;
  std::shared_ptr<PgPool> pool_;
};

}  // namespace

Result<std::unique_ptr<Catalog>> Catalog::open(const CatalogOptions& options) {
  if (!is_postgres_url(options.store)) {
    return std::unique_ptr<Catalog>(
        new FolderCatalog(options.store.empty() ? options.data_dir : fs::path(options.store)));
  }
  // Connects once now: a wrong URL or a server that is down is said at start, not at the first request.
  auto connection = KOTAE_TRY_VALUE(PgConnection::connect(options.store));
  KOTAE_TRY(migrate_postgres_schema(*connection));
  const fs::path cache = options.index_cache.empty() ? options.data_dir / "index-cache" : options.index_cache;
  return std::unique_ptr<Catalog>(
      new PostgresCatalog(options.store, cache, "PostgreSQL (" + connection->server() + ")"));
}

}  // namespace kotae::store
