#pragma once
// A secret the store keeps for a while (a session's refresh token), sealed so that a copy of the
// database alone does not hold it: AES-256-GCM under a key derived from a secret every replica has
// and the database does not (the OpenID client's secret). A changed client secret leaves old seals
// unreadable, which only costs the sessions their next revalidation.

#include <string>
#include <string_view>

#include "core/result.h"

namespace kotae::server::auth {

class SecretSeal {
 public:
  // `purpose` separates keys derived from one secret for different uses.
  SecretSeal(std::string_view key_secret, std::string_view purpose);
  // base64url of a random 12-byte IV, the ciphertext and the 16-byte tag; "" for "".
  std::string seal(std::string_view plain) const;
  // invalid_argument when it was not sealed with this key, or was altered.
  Result<std::string> open(std::string_view sealed) const;

 private:
  std::string key_;  // 32 bytes
};

}  // namespace kotae::server::auth
