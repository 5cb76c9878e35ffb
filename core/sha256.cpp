#include "core/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "core/assert.h"

namespace kotae {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext new_context() {
  DigestContext ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  KOTAE_ASSERT(ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1);
  return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  KOTAE_ASSERT(EVP_DigestFinal_ex(ctx, digest.data(), &length) == 1);
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

std::string finish_hex(EVP_MD_CTX* ctx) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string digest = finish(ctx);
  std::string hex(digest.size() * 2, '0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    const auto byte = static_cast<unsigned char>(digest[i]);
    hex[2 * i] = kHex[byte >> 4];
    hex[2 * i + 1] = kHex[byte & 0xf];
  }
  return hex;
}

}  // namespace

std::string sha256_bytes(std::string_view bytes) {
  auto ctx = new_context();
  KOTAE_ASSERT(EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) == 1);
  return finish(ctx.get());
}

std::string sha256_hex(std::string_view bytes) {
  auto ctx = new_context();
  KOTAE_ASSERT(EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) == 1);
  return finish_hex(ctx.get());
}

Result<std::string> sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, "cannot open " + path.string() + ": " + std::strerror(errno));
  auto ctx = new_context();
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), buffer.size());
    KOTAE_ASSERT(EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(in.gcount())) == 1);
  }
  if (in.bad()) return make_error(ErrorCode::io, "read error in " + path.string());
  return finish_hex(ctx.get());
}

}  // namespace kotae
