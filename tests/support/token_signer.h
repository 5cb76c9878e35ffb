#pragma once
// A test's own signing keys and tokens (RSA and EC through OpenSSL), to check that the server's
// verifier accepts what a provider would sign and refuses what an attacker would: the verifier itself
// is never used to make them.

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base64url.h"

namespace kotae::test {

class TokenSigner {
 public:
  static TokenSigner rsa(std::string kid, unsigned bits = 2048) {
    return TokenSigner(std::move(kid), EVP_RSA_gen(bits), 0);
  }
  static TokenSigner ec(std::string kid, bool p384 = false) {
    return TokenSigner(std::move(kid), EVP_EC_gen(p384 ? "P-384" : "P-256"), p384 ? 48 : 32);
  }

  // The public key as a JWK.
  nlohmann::json jwk() const {
    nlohmann::json key{{"kid", kid_}, {"use", "sig"}};
    if (coordinate_ == 0) {
      key["kty"] = "RSA";
      key["n"] = base64url_encode(bignum(OSSL_PKEY_PARAM_RSA_N, 0));
      key["e"] = base64url_encode(bignum(OSSL_PKEY_PARAM_RSA_E, 0));
    } else {
      key["kty"] = "EC";
      key["crv"] = coordinate_ == 32 ? "P-256" : "P-384";
      key["x"] = base64url_encode(bignum(OSSL_PKEY_PARAM_EC_PUB_X, coordinate_));
      key["y"] = base64url_encode(bignum(OSSL_PKEY_PARAM_EC_PUB_Y, coordinate_));
    }
    return key;
  }
  // The public key in PEM, as an attacker would copy it from the JWKS to use as an HMAC secret.
  std::string public_pem() const {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    PEM_write_bio_PUBKEY(bio.get(), key_.get());
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
  }

  // A compact JWS of `claims` with this key, `alg` in the header ("RS256", "PS256", "ES256" …).
  std::string sign(const nlohmann::json& claims, const std::string& alg, nlohmann::json header = {}) const {
    header["alg"] = alg;
    if (!header.contains("kid")) header["kid"] = kid_;
    const std::string input = base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());
    return input + "." + base64url_encode(signature(input, alg));
  }
  const std::string& kid() const { return kid_; }

  // A token with an HMAC "signature" keyed by `secret`, or with none at all ("none").
  static std::string unsigned_or_hmac(const nlohmann::json& claims, const std::string& alg, const std::string& secret,
                                      const std::string& kid) {
    const nlohmann::json header{{"alg", alg}, {"kid", kid}};
    const std::string input = base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());
    if (alg == "none") return input + ".";
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &length);
    return input + "." + base64url_encode(std::string(reinterpret_cast<char*>(mac), length));
  }

 private:
  TokenSigner(std::string kid, EVP_PKEY* key, std::size_t coordinate)
      : kid_(std::move(kid)), key_(key, &EVP_PKEY_free), coordinate_(coordinate) {
    if (!key) throw std::runtime_error("OpenSSL could not make a key");
  }

  std::string bignum(const char* param, std::size_t width) const {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key_.get(), param, &bn) != 1) throw std::runtime_error("no key parameter");
    std::string out(width ? width : static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
    BN_free(bn);
    return out;
  }

  std::string signature(const std::string& input, const std::string& alg) const {
    const EVP_MD* md = alg.ends_with("384") ? EVP_sha384() : alg.ends_with("512") ? EVP_sha512() : EVP_sha256();
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_PKEY_CTX* pctx = nullptr;
    EVP_DigestSignInit(ctx.get(), &pctx, md, nullptr, key_.get());
    if (alg.starts_with("PS")) {
      EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
      EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
    }
    std::size_t length = 0;
    EVP_DigestSign(ctx.get(), nullptr, &length, reinterpret_cast<const unsigned char*>(input.data()), input.size());
    std::string sig(length, '\0');
    EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &length,
                   reinterpret_cast<const unsigned char*>(input.data()), input.size());
    sig.resize(length);
    if (coordinate_ == 0) return sig;
    // ECDSA: DER → r ‖ s, as JWS writes it.
    const auto* p = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* parsed = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    std::string raw(2 * coordinate_, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(parsed), reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(coordinate_));
    BN_bn2binpad(ECDSA_SIG_get0_s(parsed), reinterpret_cast<unsigned char*>(raw.data() + coordinate_),
                 static_cast<int>(coordinate_));
    ECDSA_SIG_free(parsed);
    return raw;
  }

  std::string kid_;
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key_;
  std::size_t coordinate_;
};

}  // namespace kotae::test
