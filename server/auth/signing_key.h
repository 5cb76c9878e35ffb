#pragma once
// The public keys an OpenID provider signs its tokens with, read from its JWKS document (RFC 7517),
// and the one check made with them: a JWS signature (RFC 7515) by an algorithm on the allow-list.
// OpenSSL stays behind this interface.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kotae::server::auth {

// The signature algorithms Kotae accepts: asymmetric only. `none` and the HMACs (HS256 …) are not
// here, so a token that names them, or that uses a provider's public key as an HMAC secret, is
// refused before any key is looked at.
enum class Algorithm { rs256, rs384, rs512, ps256, ps384, ps512, es256, es384 };

std::optional<Algorithm> algorithm_named(std::string_view name);  // "RS256" …; nothing for any other
const char* name_of(Algorithm algorithm);

inline constexpr std::size_t kMaxJwksBytes = 256 * 1024;
inline constexpr std::size_t kMaxJwksKeys = 32;

// One verification key: RSA (2048 to 8192 bits) or EC (P-256, P-384), with its `kid` and, when the
// JWK names one, the only algorithm it may be used with.
class SigningKey {
 public:
  ~SigningKey();
  SigningKey(SigningKey&&) noexcept;
  SigningKey& operator=(SigningKey&&) noexcept;
  struct Pkey;  // OpenSSL's key, opaque here

  const std::string& kid() const { return kid_; }
  // Whether this key can check `algorithm`: the key's type and curve fit, and its own "alg", if any, is it.
  bool fits(Algorithm algorithm) const;
  // Whether `signature` signs `signing_input` under this key (fits(algorithm) is checked first).
  bool verifies(Algorithm algorithm, std::string_view signing_input, std::string_view signature) const;

 private:
  friend class SigningKeys;
  SigningKey(std::string kid, std::optional<Algorithm> alg, std::unique_ptr<Pkey> key);

  std::string kid_;
  std::optional<Algorithm> alg_;
  std::unique_ptr<Pkey> key_;
};

// A provider's key set. Keys that are not for signatures ("use": "enc"), of other types (oct, OKP) or
// unusable are skipped, not fatal: providers publish those beside the keys that matter.
class SigningKeys {
 public:
  // At most kMaxJwksBytes and kMaxJwksKeys; an error when nothing usable is left.
  static Result<SigningKeys> parse(std::string_view jwks);

  std::size_t size() const { return keys_.size(); }
  // The key a token's header points at: by `kid`; without a kid, the only key that fits the algorithm.
  // Null when there is none (a rotated key the set does not have yet: fetch the set again).
  const SigningKey* find(std::string_view kid, Algorithm algorithm) const;

 private:
  std::vector<SigningKey> keys_;
};

}  // namespace kotae::server::auth
