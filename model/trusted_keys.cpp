#include "model/trusted_keys.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kotae {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPublicTag = "kotae-ed25519-public";
constexpr std::string_view kSecretTag = "kotae-ed25519-secret";
constexpr std::uintmax_t kMaxKeyFileBytes = 4096;

void init_sodium() {
  [[maybe_unused]] static const int ready = sodium_init();  // thread-safe, idempotent; < 0 only without entropy
}

std::string to_hex(std::string_view bytes) {
  std::string hex(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  hex.pop_back();
  return hex;
}

// Exactly `size` bytes from hex, else empty.
std::string from_hex(std::string_view hex, std::size_t size) {
  std::string bytes(size, '\0');
  std::size_t length = 0;
  const char* end = nullptr;
  if (sodium_hex2bin(reinterpret_cast<unsigned char*>(bytes.data()), size, hex.data(), hex.size(), nullptr, &length,
                     &end) != 0 ||
      length != size || end != hex.data() + hex.size()) {
    return {};
  }
  return bytes;
}

// The words of a key file's first line.
std::vector<std::string> words_of(std::string_view text) {
  std::istringstream line(std::string(text.substr(0, text.find('\n'))));
  std::vector<std::string> words;
  for (std::string w; line >> w;) words.push_back(w);
  return words;
}

Result<std::string> read_small_file(const fs::path& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) return make_error(ErrorCode::not_found, "cannot read key file " + file.string() + ": " + ec.message());
  if (size > kMaxKeyFileBytes) return make_error(ErrorCode::corrupt, file.string() + " is too large to be a key file");
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return make_error(ErrorCode::io, "cannot read key file " + file.string());
  return text.str();
}

Result<void> write_new_file(const fs::path& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return make_error(errno == EEXIST ? ErrorCode::already_exists : ErrorCode::io,
                      "cannot create " + path.string() + ": " + std::strerror(errno));
  }
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) return make_error(ErrorCode::io, "cannot write " + path.string());
  return {};
}

}  // namespace

std::string key_id(std::string_view public_key_bytes) {
  init_sodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(public_key_bytes.data()), public_key_bytes.size());
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest), 8));
}

KeyPair generate_key_pair() {
  init_sodium();
  std::string pk(crypto_sign_PUBLICKEYBYTES, '\0'), sk(crypto_sign_SECRETKEYBYTES, '\0');
  crypto_sign_keypair(reinterpret_cast<unsigned char*>(pk.data()), reinterpret_cast<unsigned char*>(sk.data()));
  const std::string id = key_id(pk);
  KeyPair pair{{id, pk, {}}, {id, sk}};
  sodium_memzero(sk.data(), sk.size());
  return pair;
}

std::string format_public_key(const PublicKey& key, std::string_view comment) {
  std::string line(kPublicTag);
  line.append(" ").append(to_hex(key.bytes));
  if (!comment.empty()) line.append(" ").append(comment);
  return line.append("\n");
}

std::string format_secret_key(const SecretKey& key) {
  std::string line(kSecretTag);
  return line.append(" ").append(to_hex(key.bytes)).append("\n");
}

Result<PublicKey> parse_public_key(std::string_view text, const std::string& origin) {
  const auto words = words_of(text);
  std::string bytes;
  if (words.size() >= 2 && words[0] == kPublicTag) bytes = from_hex(words[1], crypto_sign_PUBLICKEYBYTES);
  if (bytes.empty()) {
    return make_error(ErrorCode::corrupt,
                      origin + ": not a Kotae public key (\"" + std::string(kPublicTag) + " HEX\")");
  }
  return PublicKey{key_id(bytes), bytes, origin};
}

Result<SecretKey> parse_secret_key(std::string_view text, const std::string& origin) {
  init_sodium();
  const auto words = words_of(text);
  std::string bytes;
  if (words.size() == 2 && words[0] == kSecretTag) bytes = from_hex(words[1], crypto_sign_SECRETKEYBYTES);
  if (bytes.empty()) {
    return make_error(ErrorCode::corrupt,
                      origin + ": not a Kotae secret key (\"" + std::string(kSecretTag) + " HEX\")");
  }
  // The last 32 bytes are the public key; check they belong to the seed, so a damaged file is caught here.
  std::string pk(crypto_sign_PUBLICKEYBYTES, '\0');
  crypto_sign_ed25519_sk_to_pk(reinterpret_cast<unsigned char*>(pk.data()),
                               reinterpret_cast<const unsigned char*>(bytes.data()));
  unsigned char seed[crypto_sign_SEEDBYTES];
  crypto_sign_ed25519_sk_to_seed(seed, reinterpret_cast<const unsigned char*>(bytes.data()));
  std::string derived_pk(crypto_sign_PUBLICKEYBYTES, '\0'), derived_sk(crypto_sign_SECRETKEYBYTES, '\0');
  crypto_sign_seed_keypair(reinterpret_cast<unsigned char*>(derived_pk.data()),
                           reinterpret_cast<unsigned char*>(derived_sk.data()), seed);
  sodium_memzero(seed, sizeof seed);
  sodium_memzero(derived_sk.data(), derived_sk.size());
  if (derived_pk != pk) return make_error(ErrorCode::corrupt, origin + ": the secret key is damaged");
  return SecretKey{key_id(pk), bytes};
}

Result<SecretKey> read_secret_key(const fs::path& file) {
  auto text = read_small_file(file);
  if (!text) return text.error();
  return parse_secret_key(*text, file.string());
}

Result<void> write_key_pair(const KeyPair& pair, const fs::path& prefix, std::string_view comment) {
  const fs::path secret = prefix.string() + ".key", pub = prefix.string() + ".pub";
  std::error_code ec;
  if (fs::exists(secret, ec) || fs::exists(pub, ec)) {
    return make_error(ErrorCode::already_exists, prefix.string() + ".key or .pub exists; keys are never overwritten");
  }
  // The secret key is created 0600 from the start: there is no moment when others may read it.
  if (auto ok = write_new_file(secret, format_secret_key(pair.secret_key), 0600); !ok) return ok;
  if (auto ok = write_new_file(pub, format_public_key(pair.public_key, comment), 0644); !ok) return ok;
  return {};
}

Result<std::vector<PublicKey>> read_public_keys(const fs::path& file_or_folder) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(file_or_folder, ec)) {
    for (const auto& entry : fs::directory_iterator(file_or_folder, ec)) {
      if (entry.path().extension() == ".pub") files.push_back(entry.path());
    }
    if (ec) return make_error(ErrorCode::io, "cannot list " + file_or_folder.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(file_or_folder);
  }
  std::vector<PublicKey> keys;
  for (const auto& file : files) {
    auto text = read_small_file(file);
    if (!text) return text.error();
    auto key = parse_public_key(*text, file.string());
    if (!key) return key.error();
    keys.push_back(std::move(*key));
  }
  return keys;
}

Result<std::vector<PublicKey>> load_trusted_keys(const fs::path& data_dir) {
  std::vector<fs::path> sources;
  std::error_code ec;
  if (fs::exists(trusted_keys_dir(data_dir), ec)) sources.push_back(trusted_keys_dir(data_dir));
  if (const char* env = std::getenv("KOTAE_TRUSTED_KEYS"); env && *env) {
    std::string list = env;
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) sources.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  std::vector<PublicKey> keys;
  for (const auto& source : sources) {
    auto found = read_public_keys(source);
    if (!found) return found.error();
    for (auto& key : *found) {
      const bool known = std::any_of(keys.begin(), keys.end(), [&](const PublicKey& k) { return k.id == key.id; });
      if (!known) keys.push_back(std::move(key));
    }
  }
  return keys;
}

}  // namespace kotae
