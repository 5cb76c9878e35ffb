#pragma once
// The statements of both member stores (store/sqlite_members.cpp, store/postgres_members.cpp), written
// once as conversation_sql.h's are. A member is the columns kind, subject, role, added_at, added_by.

namespace kotae::store::member_sql {

inline constexpr const char* kPut =
    "INSERT INTO collection_members(tenant, collection, kind, subject, role, added_at, added_by) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, collection, kind, subject) "
    "DO UPDATE SET role = excluded.role, added_at = excluded.added_at, added_by = excluded.added_by";
inline constexpr const char* kMembers =
    "SELECT kind, subject, role, added_at, added_by FROM collection_members WHERE tenant = $1 AND collection = $2 "
    "ORDER BY kind, subject";
inline constexpr const char* kAll =
    "SELECT collection, kind, subject, role, added_at, added_by FROM collection_members WHERE tenant = $1 "
    "ORDER BY collection, kind, subject";
inline constexpr const char* kRemove =
    "DELETE FROM collection_members WHERE tenant = $1 AND collection = $2 AND kind = $3 AND subject = $4 "
    "RETURNING kind";
inline constexpr const char* kRemoveCollection = "DELETE FROM collection_members WHERE tenant = $1 AND collection = $2";
// SQLite numbers "$N" by first appearance: the new name ($1) comes first. Run after kRemoveCollection
// of the new name, in the same transaction.
inline constexpr const char* kCopyCollection =
    "INSERT INTO collection_members(tenant, collection, kind, subject, role, added_at, added_by) "
    "SELECT tenant, $1, kind, subject, role, added_at, added_by FROM collection_members "
    "WHERE tenant = $2 AND collection = $3";

}  // namespace kotae::store::member_sql
