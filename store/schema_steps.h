#pragma once
// A component's schema in one back-end, as the steps that build it: each part of the store that keeps
// tables (a collection's records, jobs, API keys, conversations, kept document files) owns its steps
// in its .cpp, one set per back-end. Each back-end records how far every component has come in one
// table, kotae_schema_versions (component, version): store/postgres_schema.h and store/sqlite_schema.h.

#include <cstdint>
#include <span>

namespace kotae::store {

struct SchemaSteps {
  const char* component;
  std::span<const char* const> steps;  // steps[i] brings version i to i + 1
  std::int64_t version() const { return static_cast<std::int64_t>(steps.size()); }
};

}  // namespace kotae::store
