#pragma once
// `kotae store copy --from STORE --to STORE`: copies collections between stores (a folder of SQLite
// collections, or PostgreSQL) with their embeddings, so nothing is embedded again: how a user grows
// from the embedded default to a cluster (docs/scale-out.md), or goes back.

#include <filesystem>
#include <string>

namespace kotae::cli {

struct StoreCopyOptions {
  std::string from, to;               // postgres://… or a folder (a data directory: its collections/ and tenants/)
  std::filesystem::path data_dir;     // for a PostgreSQL side: the default index cache
  std::filesystem::path index_cache;  // ditto, when given
  std::string tenant;                 // only this tenant's collections (default: every tenant's)
  std::string collection;             // only this collection (of the local tenant unless --tenant)
  bool json = false;                  // one JSON line per collection
};

int run_store_copy(const StoreCopyOptions& options);

}  // namespace kotae::cli
