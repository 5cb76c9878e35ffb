#pragma once
// Signed-in people's sessions, and the sign-ins under way, where every replica finds them: SQLite's
// server.db (store/sqlite_sessions.h) or PostgreSQL (store/postgres_sessions.h). A session is found by
// the SHA-256 of the id its cookie holds (the id itself is never stored); a sign-in by the SHA-256 of
// its `state`, and only once: taking it removes it, so a replayed state finds nothing.

#include <optional>
#include <string>

#include "core/result.h"

namespace kotae::store {

struct SessionRecord {
  std::string id_hash;  // SHA-256 of the cookie's session id, hex
  std::string tenant;
  std::string person;    // JSON: {user, name, email, groups, role}
  std::string csrf;      // the token unsafe requests must carry (X-CSRF-Token)
  std::string id_token;  // the provider's ID token, for its end-session endpoint's id_token_hint
  double created_at = 0, last_seen = 0, expires_at = 0;  // unix seconds; expires_at: the absolute bound
  std::string refresh_token;  // the provider's, sealed (server/auth/secret_seal.h); "" when it gave none
  double checked_at = 0;      // when the person was last revalidated with the provider
};

struct SignInRecord {
  std::string state_hash;  // SHA-256 of `state`, hex
  std::string nonce, code_verifier, return_to;
  double created_at = 0;
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;
  virtual Result<void> create(const SessionRecord& session) = 0;
  virtual Result<std::optional<SessionRecord>> get(const std::string& id_hash) = 0;
  // Marks it used now (idle expiry counts from here).
  virtual Result<void> touch(const std::string& id_hash, double now) = 0;
  virtual Result<void> remove(const std::string& id_hash) = 0;
  // Claims its revalidation for this replica: true, with checked_at set to `now`, when nobody checked
  // it since `checked_before` (two replicas never spend one refresh token twice).
  virtual Result<bool> claim_check(const std::string& id_hash, double now, double checked_before) = 0;
  // What the provider says of the person now, and the refresh token to use next.
  virtual Result<void> revalidated(const std::string& id_hash, const std::string& person,
                                   const std::string& refresh_token) = 0;
  // Sessions past `idle_before` (last used earlier) or their absolute expiry, and sign-ins begun before
  // `signin_before`.
  virtual Result<void> trim(double now, double idle_before, double signin_before) = 0;

  virtual Result<void> begin_sign_in(const SignInRecord& sign_in) = 0;
  // The sign-in, removed; nothing when there is none (never begun, or taken already).
  virtual Result<std::optional<SignInRecord>> take_sign_in(const std::string& state_hash) = 0;
};

}  // namespace kotae::store
