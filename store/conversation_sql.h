#pragma once
// The statements of both conversation stores (store/sqlite_conversations.cpp on SQLite,
// store/postgres_conversations.cpp on PostgreSQL), written once: SQLite takes "$N" as a named
// parameter numbered in order of first appearance, so every statement names its parameters in
// ascending order and both bind them by number. A summary is the columns id, collection, title,
// created_at, updated_at, turn_count, in that order (kGet adds turns).

#include <cstddef>
#include <cstdint>

namespace kotae::store::conversation_sql {

// A count as both databases' integer parameter.
inline std::int64_t int64(std::size_t n) {
  return static_cast<std::int64_t>(n);
}

#define KOTAE_CONVERSATION_SUMMARY "id, collection, title, created_at, updated_at, turn_count"

// A conversation is its owner's (the `owner` column: the person), or the whole tenant's when that is
// empty: every statement but the insert matches "(owner = $N OR owner = '')".
inline constexpr const char* kInsert =
    "INSERT INTO conversations(id, tenant, collection, title, created_at, updated_at, turn_count, turns, owner) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
// Beyond $2 conversations, the tenant's least recently updated go.
inline constexpr const char* kTrim =
    "DELETE FROM conversations WHERE tenant = $1 AND updated_at <= "
    "(SELECT updated_at FROM conversations WHERE tenant = $1 ORDER BY updated_at DESC LIMIT 1 OFFSET $2)";
inline constexpr const char* kUpdateTurns =
    "UPDATE conversations SET turns = $1, turn_count = $2, updated_at = $3 "
    "WHERE id = $4 AND tenant = $5 AND turn_count = $6 AND (owner = $7 OR owner = '') RETURNING id";
inline constexpr const char* kGet =
    "SELECT " KOTAE_CONVERSATION_SUMMARY
    ", turns FROM conversations WHERE id = $1 AND tenant = $2 AND (owner = $3 OR owner = '')";
inline constexpr const char* kList = "SELECT " KOTAE_CONVERSATION_SUMMARY
                                     " FROM conversations "
                                     "WHERE tenant = $1 AND (CAST($2 AS TEXT) = '' OR collection = $2) "
                                     "AND (owner = $3 OR owner = '') ORDER BY updated_at DESC, id DESC LIMIT $4";
inline constexpr const char* kRename =
    "UPDATE conversations SET title = $1, updated_at = $2 WHERE id = $3 AND tenant = $4 "
    "AND (owner = $5 OR owner = '') RETURNING " KOTAE_CONVERSATION_SUMMARY;
inline constexpr const char* kRemove =
    "DELETE FROM conversations WHERE id = $1 AND tenant = $2 AND (owner = $3 OR owner = '') RETURNING id";
inline constexpr const char* kRemoveCollection = "DELETE FROM conversations WHERE tenant = $1 AND collection = $2";
inline constexpr const char* kRenameCollection =
    "UPDATE conversations SET collection = $1 WHERE tenant = $2 AND collection = $3";

#undef KOTAE_CONVERSATION_SUMMARY

}  // namespace kotae::store::conversation_sql
