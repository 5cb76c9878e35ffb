#pragma once
// Where API keys are kept beside the --api-keys file: each key's entry, the same JSON object as in
// that file (name, tenant, sha256 of the key, admin, rates, quota), keyed by its "sha256". SQLite's
// server.db (store/sqlite_api_keys.h) or PostgreSQL, for every replica (store/postgres_api_keys.h). The
// server adds these to the file's keys; the key itself is never stored.

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kotae::store {

class ApiKeyStore {
 public:
  virtual ~ApiKeyStore() = default;
  // Every stored entry, oldest first, as a JSON list.
  virtual Result<nlohmann::json> entries() = 0;
  // Adds one entry, or replaces the one with its sha256; the replicas hear of it at once.
  virtual Result<void> put(const nlohmann::json& entry) = 0;
};

}  // namespace kotae::store
