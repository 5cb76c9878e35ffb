#include "server/auth/signing_key.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/base64url.h"
#include "server/json_body.h"  // nested_deeper_than

namespace kotae::server::auth {

struct SigningKey::Pkey {
  EVP_PKEY* pkey = nullptr;
  bool rsa = false;
  std::string curve;           // EC: "P-256" or "P-384"
  std::size_t coordinate = 0;  // EC: bytes of r and of s in a JWS signature
  ~Pkey() { EVP_PKEY_free(pkey); }
};

namespace {

struct AlgorithmInfo {
  Algorithm algorithm;
  const char* name;
  const EVP_MD* (*digest)();
  enum { pkcs1, pss, ecdsa } kind;
  const char* curve;  // ECDSA only
};

constexpr std::array<AlgorithmInfo, 8> kAlgorithms{{
    {Algorithm::rs256, "RS256", EVP_sha256, AlgorithmInfo::pkcs1, nullptr},
    {Algorithm::rs384, "RS384", EVP_sha384, AlgorithmInfo::pkcs1, nullptr},
    {Algorithm::rs512, "RS512", EVP_sha512, AlgorithmInfo::pkcs1, nullptr},
    {Algorithm::ps256, "PS256", EVP_sha256, AlgorithmInfo::pss, nullptr},
    {Algorithm::ps384, "PS384", EVP_sha384, AlgorithmInfo::pss, nullptr},
    {Algorithm::ps512, "PS512", EVP_sha512, AlgorithmInfo::pss, nullptr},
    {Algorithm::es256, "ES256", EVP_sha256, AlgorithmInfo::ecdsa, "P-256"},
    {Algorithm::es384, "ES384", EVP_sha384, AlgorithmInfo::ecdsa, "P-384"},
}};

const AlgorithmInfo& info(Algorithm algorithm) {
  return kAlgorithms[static_cast<std::size_t>(algorithm)];
}

template <class T, void (*Free)(T*)>
struct Freed {
  void operator()(T* p) const { Free(p); }
};
using Bignum = std::unique_ptr<BIGNUM, Freed<BIGNUM, BN_free>>;
using ParamBuilder = std::unique_ptr<OSSL_PARAM_BLD, Freed<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using Params = std::unique_ptr<OSSL_PARAM, Freed<OSSL_PARAM, OSSL_PARAM_free>>;
using PkeyContext = std::unique_ptr<EVP_PKEY_CTX, Freed<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using DigestContext = std::unique_ptr<EVP_MD_CTX, Freed<EVP_MD_CTX, EVP_MD_CTX_free>>;
using EcSignature = std::unique_ptr<ECDSA_SIG, Freed<ECDSA_SIG, ECDSA_SIG_free>>;

// A JWK member holding base64url bytes, or nothing.
std::optional<std::string> bytes_member(const nlohmann::json& jwk, const char* name) {
  const auto it = jwk.find(name);
  if (it == jwk.end() || !it->is_string()) return std::nullopt;
  return base64url_decode(it->get_ref<const std::string&>());
}

Bignum bignum(std::string_view bytes) {
  return Bignum(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()), nullptr));
}

// The key OpenSSL builds from `params`, of type `type`, after checking it as a public key (an EC
// point off its curve is refused here).
EVP_PKEY* public_key_from(const char* type, const OSSL_PARAM* params) {
  PkeyContext context(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* pkey = nullptr;
  if (!context || EVP_PKEY_fromdata_init(context.get()) != 1 ||
      EVP_PKEY_fromdata(context.get(), &pkey, EVP_PKEY_PUBLIC_KEY, const_cast<OSSL_PARAM*>(params)) != 1) {
    return nullptr;
  }
  PkeyContext check(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey, nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) != 1) {
    EVP_PKEY_free(pkey);
    return nullptr;
  }
  return pkey;
}

std::string_view without_leading_zeros(std::string_view bytes) {
  while (!bytes.empty() && bytes.front() == '\0') bytes.remove_prefix(1);
  return bytes;
}

std::unique_ptr<SigningKey::Pkey> rsa_key(const nlohmann::json& jwk) {
  const auto n = bytes_member(jwk, "n"), e = bytes_member(jwk, "e");
  if (!n || !e) return nullptr;
  const auto modulus = without_leading_zeros(*n), exponent = without_leading_zeros(*e);
  // 2048 bits at least (NIST's floor); 8192 at most, so a hostile set cannot make each check slow.
  if (modulus.size() < 256 || modulus.size() > 1024 || exponent.empty() || exponent.size() > 8) return nullptr;
  Bignum bn_n = bignum(modulus), bn_e = bignum(exponent);
  ParamBuilder builder(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !builder || OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return nullptr;
  }
  Params params(OSSL_PARAM_BLD_to_param(builder.get()));
  if (!params) return nullptr;
  auto key = std::make_unique<SigningKey::Pkey>();
  key->pkey = public_key_from("RSA", params.get());
  key->rsa = true;
  return key->pkey ? std::move(key) : nullptr;
}

std::unique_ptr<SigningKey::Pkey> ec_key(const nlohmann::json& jwk) {
  const std::string curve = jwk.value("crv", "");
  const std::size_t coordinate = curve == "P-256" ? 32 : curve == "P-384" ? 48 : 0;
  const auto x = bytes_member(jwk, "x"), y = bytes_member(jwk, "y");
  if (coordinate == 0 || !x || !y || x->size() != coordinate || y->size() != coordinate) return nullptr;
  const std::string point = std::string(1, '\x04').append(*x).append(*y);  // uncompressed (SEC 1)
  ParamBuilder builder(OSSL_PARAM_BLD_new());
  const char* group = coordinate == 32 ? "prime256v1" : "secp384r1";
  if (!builder || OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1) {
    return nullptr;
  }
  Params params(OSSL_PARAM_BLD_to_param(builder.get()));
  if (!params) return nullptr;
  auto key = std::make_unique<SigningKey::Pkey>();
  key->pkey = public_key_from("EC", params.get());
  key->curve = curve;
  key->coordinate = coordinate;
  return key->pkey ? std::move(key) : nullptr;
}

// An ECDSA signature as JWS writes it (r ‖ s, fixed width) in the DER form OpenSSL checks.
std::optional<std::string> ecdsa_der(std::string_view raw, std::size_t coordinate) {
  if (raw.size() != 2 * coordinate) return std::nullopt;
  EcSignature signature(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(coordinate), nullptr);
  BIGNUM* s =
      BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data() + coordinate), static_cast<int>(coordinate), nullptr);
  if (!signature || !r || !s || ECDSA_SIG_set0(signature.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return std::nullopt;
  }
  unsigned char* der = nullptr;
  const int length = i2d_ECDSA_SIG(signature.get(), &der);
  if (length <= 0) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return out;
}

}  // namespace

std::optional<Algorithm> algorithm_named(std::string_view name) {
  for (const auto& a : kAlgorithms) {
    if (name == a.name) return a.algorithm;
  }
  return std::nullopt;
}

const char* name_of(Algorithm algorithm) {
  return info(algorithm).name;
}

SigningKey::SigningKey(std::string kid, std::optional<Algorithm> alg, std::unique_ptr<Pkey> key)
    : kid_(std::move(kid)), alg_(alg), key_(std::move(key)) {}
SigningKey::~SigningKey() = default;
SigningKey::SigningKey(SigningKey&&) noexcept = default;
SigningKey& SigningKey::operator=(SigningKey&&) noexcept = default;

bool SigningKey::fits(Algorithm algorithm) const {
  if (alg_ && *alg_ != algorithm) return false;
  const auto& a = info(algorithm);
  return a.kind == AlgorithmInfo::ecdsa ? !key_->rsa && key_->curve == a.curve : key_->rsa;
}

bool SigningKey::verifies(Algorithm algorithm, std::string_view signing_input, std::string_view signature) const {
  if (!fits(algorithm)) return false;
  const auto& a = info(algorithm);
  std::string der;
  if (a.kind == AlgorithmInfo::ecdsa) {
    auto converted = ecdsa_der(signature, key_->coordinate);
    if (!converted) return false;
    der = std::move(*converted);
    signature = der;
  } else if (signature.size() != static_cast<std::size_t>(EVP_PKEY_get_size(key_->pkey))) {
    return false;
  }
  DigestContext context(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pkey_context = nullptr;  // owned by `context`
  bool ok = context && EVP_DigestVerifyInit(context.get(), &pkey_context, a.digest(), nullptr, key_->pkey) == 1;
  if (ok && a.kind == AlgorithmInfo::pss) {
    ok = EVP_PKEY_CTX_set_rsa_padding(pkey_context, RSA_PKCS1_PSS_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pkey_context, RSA_PSS_SALTLEN_DIGEST) == 1 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(pkey_context, a.digest()) == 1;
  }
  ok = ok && EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                              reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) == 1;
  ERR_clear_error();  // a refused signature leaves nothing in this thread's error queue
  return ok;
}

Result<SigningKeys> SigningKeys::parse(std::string_view jwks) {
  auto bad = [](const std::string& why) { return make_error(ErrorCode::invalid_argument, "the JWKS " + why); };
  if (jwks.size() > kMaxJwksBytes) return bad("is larger than " + std::to_string(kMaxJwksBytes) + " bytes");
  if (nested_deeper_than(jwks, 8)) return bad("is nested too deeply");
  const auto json = nlohmann::json::parse(jwks, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("keys") || !json["keys"].is_array()) return bad("has no \"keys\" list");
  if (json["keys"].size() > kMaxJwksKeys) return bad("has more than " + std::to_string(kMaxJwksKeys) + " keys");
  SigningKeys keys;
  for (const auto& jwk : json["keys"]) {
    if (!jwk.is_object() || jwk.value("use", "sig") != "sig") continue;
    std::optional<Algorithm> alg;
    if (const auto it = jwk.find("alg"); it != jwk.end()) {
      alg = it->is_string() ? algorithm_named(it->get_ref<const std::string&>()) : std::nullopt;
      if (!alg) continue;  // a key for an algorithm not on the list (HS256, EdDSA, RSA-OAEP …)
    }
    const std::string type = jwk.value("kty", "");
    std::unique_ptr<SigningKey::Pkey> key = type == "RSA" ? rsa_key(jwk) : type == "EC" ? ec_key(jwk) : nullptr;
    ERR_clear_error();
    if (!key) continue;
    const auto kid = jwk.find("kid");
    keys.keys_.push_back(
        SigningKey(kid != jwk.end() && kid->is_string() ? kid->get<std::string>() : "", alg, std::move(key)));
  }
  if (keys.keys_.empty()) return bad("has no RSA or EC signing key Kotae can use");
  return keys;
}

const SigningKey* SigningKeys::find(std::string_view kid, Algorithm algorithm) const {
  const SigningKey* only = nullptr;
  for (const auto& key : keys_) {
    if (!key.fits(algorithm)) continue;
    if (!kid.empty()) {
      if (key.kid() == kid) return &key;
      continue;
    }
    if (only) return nullptr;  // without a kid, two candidates: ambiguous
    only = &key;
  }
  return only;
}

}  // namespace kotae::server::auth
