#pragma once
// Ed25519 keys that vouch for model manifests: the key files `kotae model keygen` writes, and the set
// of public keys this machine trusts. A key file is one line of text, so it can be read, mailed and
// diffed: "kotae-ed25519-public HEX [comment]" or "kotae-ed25519-secret HEX" (libsodium's 64-byte
// secret key: seed, then public key).

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kotae {

struct PublicKey {
  std::string id;      // key_id() of bytes
  std::string bytes;   // 32 raw bytes
  std::string origin;  // the file it came from, for messages
};

struct SecretKey {
  std::string id;
  std::string bytes;  // 64 raw bytes
};

struct KeyPair {
  PublicKey public_key;
  SecretKey secret_key;
};

// The first 16 hex digits of the SHA-256 of a public key: how a signature names its key. Derived from
// the key, so nobody chooses it, and a signature can only be checked by the key it names.
std::string key_id(std::string_view public_key_bytes);

KeyPair generate_key_pair();

std::string format_public_key(const PublicKey& key, std::string_view comment);
std::string format_secret_key(const SecretKey& key);
Result<PublicKey> parse_public_key(std::string_view text, const std::string& origin);
Result<SecretKey> parse_secret_key(std::string_view text, const std::string& origin);
Result<SecretKey> read_secret_key(const std::filesystem::path& file);

// Writes PREFIX.pub and PREFIX.key (mode 0600, never over an existing file).
Result<void> write_key_pair(const KeyPair& pair, const std::filesystem::path& prefix, std::string_view comment);

// The public keys in a .pub file, or in every *.pub file of a folder.
Result<std::vector<PublicKey>> read_public_keys(const std::filesystem::path& file_or_folder);

// What this machine trusts: DATA/trusted_keys/*.pub, and each file or folder in $KOTAE_TRUSTED_KEYS
// (':'-separated). A key file that cannot be read is an error, never skipped: a typo must not quietly
// turn signature checking off.
Result<std::vector<PublicKey>> load_trusted_keys(const std::filesystem::path& data_dir);

// Where a data directory keeps the public keys it trusts.
inline std::filesystem::path trusted_keys_dir(const std::filesystem::path& data_dir) {
  return data_dir / "trusted_keys";
}

}  // namespace kotae
