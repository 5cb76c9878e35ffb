// server/auth: a provider's JWKS read into keys, tokens checked against them, claims read into a
// person. Tokens are signed here by tests/support/token_signer.h (OpenSSL), as a provider would, and
// forged as an attacker would.

#include <gtest/gtest.h>

#include <ctime>

#include "core/base64url.h"
#include "server/auth/claim_mapping.h"
#include "server/auth/jwt.h"
#include "server/auth/secret_seal.h"
#include "support/token_signer.h"

namespace kotae::server::auth {
namespace {

using test::TokenSigner;

constexpr std::int64_t kNow = 1'800'000'000;
const char* const kIssuer = "https://id.example.com/realms/acme";

nlohmann::json claims(nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json c{{"iss", kIssuer}, {"aud", "kotae"}, {"sub", "u-1"}, {"iat", kNow - 10}, {"exp", kNow + 300}};
  c.update(extra);
  return c;
}

TokenRules rules() {
  TokenRules r;
  r.issuer = kIssuer;
  r.audiences = {"kotae"};
  return r;
}

SigningKeys keys_of(std::initializer_list<const TokenSigner*> signers) {
  nlohmann::json jwks{{"keys", nlohmann::json::array()}};
  for (const auto* s : signers) jwks["keys"].push_back(s->jwk());
  auto keys = SigningKeys::parse(jwks.dump());
  EXPECT_TRUE(keys) << keys.error().message;
  return std::move(*keys);
}

// The RSA key is the slow one to make: one for the whole suite.
const TokenSigner& rsa() {
  static const TokenSigner signer = TokenSigner::rsa("rsa-1");
  return signer;
}

TEST(Base64url, RoundTripsAndRefusesWhatNoEncoderWrites) {
  for (const std::string& bytes :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\xff\xfe\x00\x01", 4)}) {
    EXPECT_EQ(base64url_decode(base64url_encode(bytes)), bytes);
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  EXPECT_FALSE(base64url_decode("Zm9v="));  // padding
  EXPECT_FALSE(base64url_decode("Zm9v+"));  // the other alphabet
  EXPECT_FALSE(base64url_decode("Zm9vY"));  // 4n + 1 characters
}

TEST(JwtTest, AcceptsEachAllowedAlgorithmFromTheProvidersKeys) {
  const auto ec256 = TokenSigner::ec("ec-256"), ec384 = TokenSigner::ec("ec-384", true);
  const auto keys = keys_of({&rsa(), &ec256, &ec384});
  EXPECT_EQ(keys.size(), 3u);
  for (const auto& [signer, alg] : std::vector<std::pair<const TokenSigner*, std::string>>{
           {&rsa(), "RS256"}, {&rsa(), "RS512"}, {&rsa(), "PS256"}, {&ec256, "ES256"}, {&ec384, "ES384"}}) {
    const auto verified = verify_token(signer->sign(claims(), alg), keys, rules(), kNow);
    ASSERT_TRUE(verified) << alg << ": " << verified.error().message;
    EXPECT_EQ(verified->at("sub"), "u-1");
  }
}

TEST(JwtTest, RefusesAlgNoneAndAnRsaPublicKeyUsedAsAnHmacSecret) {
  const auto keys = keys_of({&rsa()});
  const auto none = verify_token(TokenSigner::unsigned_or_hmac(claims(), "none", "", "rsa-1"), keys, rules(), kNow);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("\"none\", which is not allowed"), std::string::npos) << none.error().message;
  for (const auto& secret : {rsa().public_pem(), rsa().jwk().dump()}) {
    const auto hmac =
        verify_token(TokenSigner::unsigned_or_hmac(claims(), "HS256", secret, "rsa-1"), keys, rules(), kNow);
    ASSERT_FALSE(hmac);
    EXPECT_NE(hmac.error().message.find("\"HS256\", which is not allowed"), std::string::npos);
  }
  // An algorithm on the list but not the one the rules allow.
  auto rs_only = rules();
  rs_only.algorithms = {Algorithm::rs256};
  EXPECT_FALSE(verify_token(rsa().sign(claims(), "PS256"), keys, rs_only, kNow));
}

TEST(JwtTest, RefusesAnotherIssuerOrAudience) {
  const auto keys = keys_of({&rsa()});
  auto check = [&](nlohmann::json extra) {
    return verify_token(rsa().sign(claims(extra), "RS256"), keys, rules(), kNow);
  };
  EXPECT_FALSE(check({{"iss", "https://id.example.com/realms/other"}}));
  EXPECT_FALSE(check({{"iss", nullptr}}));
  EXPECT_FALSE(check({{"aud", "another-service"}}));
  EXPECT_FALSE(check({{"aud", nlohmann::json::array({"a", "b"})}}));
  EXPECT_FALSE(check({{"aud", 5}}));
  EXPECT_TRUE(check({{"aud", nlohmann::json::array({"account", "kotae"})}}));
}

TEST(JwtTest, RefusesExpiredAndNotYetValidTokensBeyondTheClockSkew) {
  const auto keys = keys_of({&rsa()});
  auto check = [&](nlohmann::json extra) {
    return verify_token(rsa().sign(claims(extra), "RS256"), keys, rules(), kNow);
  };
  EXPECT_TRUE(check({{"exp", kNow - 30}}));  // within 60 s of skew
  const auto expired = check({{"exp", kNow - 61}});
  ASSERT_FALSE(expired);
  EXPECT_NE(expired.error().message.find("expired"), std::string::npos);
  EXPECT_FALSE(check({{"exp", nullptr}}));
  EXPECT_FALSE(check({{"exp", "tomorrow"}}));
  EXPECT_TRUE(check({{"nbf", kNow + 30}}));
  const auto early = check({{"nbf", kNow + 120}});
  ASSERT_FALSE(early);
  EXPECT_NE(early.error().message.find("not valid yet"), std::string::npos);
  EXPECT_FALSE(check({{"iat", kNow + 3600}}));
}

TEST(JwtTest, RefusesATamperedPayloadAndAnotherKeysSignature) {
  const auto keys = keys_of({&rsa()});
  const std::string token = rsa().sign(claims(), "RS256");
  const auto dot = token.find('.'), last = token.rfind('.');
  const std::string forged_payload = base64url_encode(claims({{"sub", "admin"}}).dump());
  const std::string tampered = token.substr(0, dot + 1) + forged_payload + token.substr(last);
  EXPECT_FALSE(verify_token(tampered, keys, rules(), kNow));
  const auto intruder = TokenSigner::ec("rsa-1");  // another key that claims the provider's kid
  EXPECT_FALSE(verify_token(intruder.sign(claims(), "ES256"), keys, rules(), kNow));
  const auto impostor = TokenSigner::ec("ec-x");
  const auto with_ec = keys_of({&impostor});
  const auto other = TokenSigner::ec("ec-x");
  EXPECT_FALSE(verify_token(other.sign(claims(), "ES256"), with_ec, rules(), kNow));
}

TEST(JwtTest, AnUnknownKidIsNotFoundSoTheCallerFetchesTheRotatedKeys) {
  const auto rotated = TokenSigner::ec("ec-new");
  const auto unknown = verify_token(rotated.sign(claims(), "ES256"), keys_of({&rsa()}), rules(), kNow);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::not_found);
  EXPECT_TRUE(verify_token(rotated.sign(claims(), "ES256"), keys_of({&rsa(), &rotated}), rules(), kNow));
}

TEST(JwtTest, RefusesMalformedOversizedAndCriticalTokensBeforeAnyKeyIsUsed) {
  const auto keys = keys_of({&rsa()});
  for (const std::string bad : {"", "a.b", "a.b.c.d", "..", "!!.!!.!!", "e30.e30.", "W10.e30.AA"}) {
    const auto r = verify_token(bad, keys, rules(), kNow);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << bad;
  }
  EXPECT_FALSE(verify_token(rsa().sign(claims({{"pad", std::string(20000, 'x')}}), "RS256"), keys, rules(), kNow));
  EXPECT_FALSE(verify_token(rsa().sign(claims(), "RS256", {{"crit", {"exp"}}}), keys, rules(), kNow));
  nlohmann::json deep = 1;
  for (int i = 0; i < 40; ++i) deep = nlohmann::json::array({deep});
  EXPECT_FALSE(verify_token(rsa().sign(claims({{"deep", deep}}), "RS256"), keys, rules(), kNow));
}

TEST(SigningKeysTest, SkipsKeysItCannotUseAndRefusesASetWithNone) {
  const auto ec = TokenSigner::ec("ec-1");
  auto off_curve = ec.jwk();
  off_curve["kid"] = "bent";
  off_curve["y"] = base64url_encode(std::string(32, '\x01'));
  const auto weak = TokenSigner::rsa("weak", 1024);
  auto pinned = rsa().jwk();
  pinned["kid"] = "pinned";
  pinned["alg"] = "RS256";
  auto for_encryption = ec.jwk();
  for_encryption["kid"] = "enc";
  for_encryption["use"] = "enc";
  const nlohmann::json jwks{{"keys",
                             {{{"kty", "oct"}, {"k", "c2VjcmV0"}, {"kid", "hmac"}},
                              {{"kty", "OKP"}, {"crv", "Ed25519"}, {"x", "AAAA"}},
                              off_curve,
                              weak.jwk(),
                              for_encryption,
                              pinned,
                              ec.jwk()}}};
  const auto keys = SigningKeys::parse(jwks.dump());
  ASSERT_TRUE(keys) << keys.error().message;
  EXPECT_EQ(keys->size(), 2u);  // pinned and ec-1
  EXPECT_TRUE(keys->find("pinned", Algorithm::rs256));
  EXPECT_FALSE(keys->find("pinned", Algorithm::ps256));  // its JWK allows RS256 only
  EXPECT_FALSE(keys->find("bent", Algorithm::es256));
  EXPECT_FALSE(keys->find("weak", Algorithm::rs256));
  EXPECT_FALSE(keys->find("enc", Algorithm::es256));
  EXPECT_FALSE(verify_token(weak.sign(claims(), "RS256"), *keys, rules(), kNow));

  EXPECT_FALSE(SigningKeys::parse(R"({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]})"));
  EXPECT_FALSE(SigningKeys::parse("not json"));
  nlohmann::json many{{"keys", nlohmann::json::array()}};
  for (int i = 0; i < 33; ++i) many["keys"].push_back(ec.jwk());
  EXPECT_FALSE(SigningKeys::parse(many.dump()));
}

TEST(SigningKeysTest, WithoutAKidOnlyAnUnambiguousKeyIsUsed) {
  const auto a = TokenSigner::ec(""), b = TokenSigner::ec("");
  const nlohmann::json no_kid{{"kid", nullptr}};
  EXPECT_TRUE(verify_token(a.sign(claims(), "ES256", {{"typ", "JWT"}, {"kid", ""}}), keys_of({&a}), rules(), kNow));
  EXPECT_FALSE(verify_token(a.sign(claims(), "ES256", {{"kid", ""}}), keys_of({&a, &b}), rules(), kNow));
}

TEST(ClaimMappingTest, ReadsThePersonFromTheConfiguredClaims) {
  const nlohmann::json token{{"sub", "8f2c"},
                             {"preferred_username", "alice"},
                             {"email", "alice@acme.test"},
                             {"tid", "acme-tenant-id"},
                             {"realm_access", {{"roles", {"hr", "engineering"}}}}};
  ClaimNames names;
  names.groups = "realm_access.roles";
  names.tenant = "tid";
  TenantMapping tenants;
  tenants.from = {{"acme-tenant-id", "acme"}};
  const auto person = identity_from_claims(token, names, tenants);
  ASSERT_TRUE(person) << person.error().message;
  EXPECT_EQ(person->user, "8f2c");
  EXPECT_EQ(person->name, "alice");
  EXPECT_EQ(person->tenant, "acme");
  EXPECT_EQ(person->groups, (std::vector<std::string>{"hr", "engineering"}));

  // A tenant id nobody mapped places the user nowhere.
  auto stranger = token;
  stranger["tid"] = "other";
  EXPECT_FALSE(identity_from_claims(stranger, names, tenants));
  // A fixed tenant, and a tenant claim that is not a tenant's name.
  EXPECT_EQ(identity_from_claims(token, ClaimNames{}, TenantMapping{"acme", {}})->tenant, "acme");
  names.tenant = "email";
  EXPECT_FALSE(identity_from_claims(token, names, TenantMapping{}));
}

TEST(ClaimMappingTest, RefusesMissingUsersAndOversizedGroups) {
  const ClaimNames names;
  const TenantMapping tenants{"acme", {}};
  EXPECT_FALSE(identity_from_claims({{"name", "x"}}, names, tenants));
  EXPECT_FALSE(identity_from_claims({{"sub", 5}}, names, tenants));
  EXPECT_FALSE(identity_from_claims({{"sub", std::string(300, 'u')}}, names, tenants));
  EXPECT_FALSE(identity_from_claims({{"sub", "u"}, {"groups", "admins"}}, names, tenants));
  EXPECT_FALSE(identity_from_claims({{"sub", "u"}, {"groups", {1, 2}}}, names, tenants));
  EXPECT_FALSE(identity_from_claims({{"sub", "u"}, {"groups", std::vector<std::string>(300, "g")}}, names, tenants));
  EXPECT_TRUE(identity_from_claims({{"sub", "u"}, {"groups", std::vector<std::string>(3, "g")}}, names, tenants));
}

TEST(SecretSealTest, OpensWhatItSealedAndNothingAlteredOrSealedUnderAnotherKey) {
  const SecretSeal seal("client secret", "refresh token");
  const std::string token = "refresh-token-" + std::string(300, 'r');
  const auto sealed = seal.seal(token);
  EXPECT_EQ(sealed.find("refresh-token"), std::string::npos);  // not readable in the store
  EXPECT_NE(seal.seal(token), sealed);                         // a new IV every time
  ASSERT_TRUE(seal.open(sealed).ok());
  EXPECT_EQ(*seal.open(sealed), token);
  EXPECT_EQ(seal.seal(""), "");
  EXPECT_EQ(*seal.open(""), "");
  auto altered = sealed;
  altered[20] = altered[20] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(seal.open(altered).ok());
  EXPECT_FALSE(seal.open(sealed.substr(0, 30)).ok());
  EXPECT_FALSE(seal.open("not base64url!").ok());
  EXPECT_FALSE(SecretSeal("another secret", "refresh token").open(sealed).ok());
  EXPECT_FALSE(SecretSeal("client secret", "another purpose").open(sealed).ok());
}

}  // namespace
}  // namespace kotae::server::auth
