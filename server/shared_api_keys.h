#pragma once
// Over a shared store, API keys in PostgreSQL (table `api_keys`: each key's SHA-256 and its entry,
// the same JSON object as in an --api-keys file, quota included), so every replica knows every key:
// `kotae keygen --store postgres://…` adds one, and replicas read them again every second.

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "store/postgres_connection.h"

namespace kotae::server {

// Every stored entry, as a "keys" list.
Result<nlohmann::json> load_shared_key_entries(store::PgConnection& connection);
// Adds (or replaces, by its sha256) one entry.
Result<void> store_shared_key_entry(store::PgConnection& connection, const nlohmann::json& entry);

}  // namespace kotae::server
