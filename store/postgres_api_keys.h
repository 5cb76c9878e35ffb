#pragma once
// Over a shared store, API keys in PostgreSQL (table `api_keys`, store/api_key_store.h), so every
// replica knows every key: `kotae keygen --store postgres://…` adds one, and replicas read them again
// every second, or at once when told on the change channel.

#include <memory>

#include "store/api_key_store.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_api_keys_schema();

class PostgresApiKeys final : public ApiKeyStore {
 public:
  explicit PostgresApiKeys(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  Result<nlohmann::json> entries() override;
  Result<void> put(const nlohmann::json& entry) override;

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
