#pragma once
// The statements of both audit trails (store/sqlite_audit_trail.cpp, store/postgres_audit_trail.cpp),
// written once as conversation_sql.h's are: parameters "$N" in ascending order of first appearance.
// An event is the columns seq, at, tenant, actor, address, action, target, outcome, status,
// request_id, detail, in that order.

namespace kotae::store::audit_sql {

inline constexpr const char* kInsert =
    "INSERT INTO audit_events(at, tenant, actor, address, action, target, outcome, status, request_id, detail) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
inline constexpr const char* kFind =
    "SELECT seq, at, tenant, actor, address, action, target, outcome, status, request_id, detail FROM audit_events "
    "WHERE tenant = $1 AND (CAST($2 AS TEXT) = '' OR actor = $2) AND (CAST($3 AS TEXT) = '' OR action = $3) "
    "AND (CAST($4 AS TEXT) = '' OR outcome = $4) AND at >= $5 AND (CAST($6 AS DOUBLE PRECISION) = 0 OR at < $6) "
    "AND (CAST($7 AS BIGINT) = 0 OR seq < $7) "
    "ORDER BY seq DESC LIMIT $8";
inline constexpr const char* kTrimOlder = "DELETE FROM audit_events WHERE at < $1";
inline constexpr const char* kTrimBeyond =
    "DELETE FROM audit_events WHERE seq <= (SELECT seq FROM audit_events ORDER BY seq DESC LIMIT 1 OFFSET $1)";

}  // namespace kotae::store::audit_sql
