#pragma once
// The statements of both session stores (store/sqlite_sessions.cpp, store/postgres_sessions.cpp),
// written once as conversation_sql.h's are. A session is the columns id_hash, tenant, person, csrf,
// id_token, created_at, last_seen, expires_at, refresh_token, checked_at; a sign-in state_hash, nonce, code_verifier,
// return_to, created_at.

namespace kotae::store::session_sql {

inline constexpr const char* kCreate =
    "INSERT INTO sessions(id_hash, tenant, person, csrf, id_token, created_at, last_seen, expires_at, refresh_token, "
    "checked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
inline constexpr const char* kGet =
    "SELECT id_hash, tenant, person, csrf, id_token, created_at, last_seen, expires_at, refresh_token, checked_at "
    "FROM sessions WHERE id_hash = $1";
inline constexpr const char* kTouch = "UPDATE sessions SET last_seen = $1 WHERE id_hash = $2";
inline constexpr const char* kRemove = "DELETE FROM sessions WHERE id_hash = $1";
inline constexpr const char* kClaimCheck =
    "UPDATE sessions SET checked_at = $1 WHERE id_hash = $2 AND checked_at <= $3 RETURNING id_hash";
inline constexpr const char* kRevalidated = "UPDATE sessions SET person = $1, refresh_token = $2 WHERE id_hash = $3";
inline constexpr const char* kTrimSessions = "DELETE FROM sessions WHERE expires_at < $1 OR last_seen < $2";
inline constexpr const char* kTrimSignIns = "DELETE FROM sign_ins WHERE created_at < $1";
inline constexpr const char* kBeginSignIn =
    "INSERT INTO sign_ins(state_hash, nonce, code_verifier, return_to, created_at) VALUES ($1, $2, $3, $4, $5)";
inline constexpr const char* kTakeSignIn =
    "DELETE FROM sign_ins WHERE state_hash = $1 RETURNING state_hash, nonce, code_verifier, return_to, created_at";

}  // namespace kotae::store::session_sql
