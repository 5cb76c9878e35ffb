#include "server/auth/secret_seal.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "core/assert.h"
#include "core/base64url.h"
#include "core/sha256.h"

namespace kotae::server::auth {
namespace {

constexpr int kIvBytes = 12, kTagBytes = 16;
constexpr std::size_t kOverhead = kIvBytes + kTagBytes;
constexpr std::size_t kMaxSealed = 64 * 1024;  // a refresh token is a few KiB at most

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

unsigned char* bytes(std::string& s) {
  return reinterpret_cast<unsigned char*>(s.data());
}
const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

SecretSeal::SecretSeal(std::string_view key_secret, std::string_view purpose)
    : key_(sha256_bytes(std::string("kotae seal\n") + std::string(purpose) + "\n" + std::string(key_secret))) {}

std::string SecretSeal::seal(std::string_view plain) const {
  if (plain.empty()) return "";
  std::string out(kIvBytes + plain.size() + kTagBytes, '\0');
  KOTAE_ASSERT(RAND_bytes(bytes(out), kIvBytes) == 1);
  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int written = 0, last = 0;
  KOTAE_ASSERT(
      ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(std::string_view(key_)), bytes(out)) == 1);
  KOTAE_ASSERT(
      EVP_EncryptUpdate(ctx.get(), bytes(out) + kIvBytes, &written, bytes(plain), static_cast<int>(plain.size())) == 1);
  KOTAE_ASSERT(EVP_EncryptFinal_ex(ctx.get(), bytes(out) + kIvBytes + written, &last) == 1);
  KOTAE_ASSERT(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, bytes(out) + kIvBytes + plain.size()) ==
               1);
  return base64url_encode(out);
}

Result<std::string> SecretSeal::open(std::string_view sealed) const {
  if (sealed.empty()) return std::string();
  auto refused = [] {
    return make_error(ErrorCode::invalid_argument, "the sealed secret is altered or sealed under another key");
  };
  if (sealed.size() > kMaxSealed) return refused();
  const auto raw = base64url_decode(sealed);
  if (!raw || raw->size() <= kOverhead) return refused();
  const std::string_view data(*raw);
  const auto length = data.size() - kOverhead;
  std::string plain(length, '\0');
  std::string tag(data.substr(kIvBytes + length));
  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int written = 0, last = 0;
  KOTAE_ASSERT(ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(std::string_view(key_)),
                                         bytes(data)) == 1);
  KOTAE_ASSERT(EVP_DecryptUpdate(ctx.get(), bytes(plain), &written, bytes(data) + kIvBytes, static_cast<int>(length)) ==
               1);
  KOTAE_ASSERT(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, bytes(tag)) == 1);
  if (EVP_DecryptFinal_ex(ctx.get(), bytes(plain) + written, &last) != 1) return refused();
  return plain;
}

}  // namespace kotae::server::auth
