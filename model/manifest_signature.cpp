#include "model/manifest_signature.h"

#include <sodium.h>

#include <algorithm>

#include <nlohmann/json.hpp>

namespace kotae {
namespace {

// Domain separation: these bytes can never be mistaken for a signature over anything else.
constexpr std::string_view kContext = "kotae model manifest v1\n";

Result<nlohmann::json> parse_object(std::string_view text, const std::string& origin) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return make_error(ErrorCode::corrupt, origin + ": not a JSON object");
  return doc;
}

// What a signature covers: the context line, then the manifest without "signatures", compact, keys sorted.
Result<std::string> signed_bytes(nlohmann::json doc, const std::string& origin) {
  doc.erase("signatures");
  try {
    return std::string(kContext) + doc.dump();
  } catch (const nlohmann::json::exception& e) {  // invalid UTF-8
    return make_error(ErrorCode::corrupt, origin + ": " + e.what());
  }
}

std::string to_hex(const unsigned char* bytes, std::size_t size) {
  std::string hex(size * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes, size);
  hex.pop_back();
  return hex;
}

bool from_hex(const std::string& hex, unsigned char* out, std::size_t size) {
  std::size_t length = 0;
  const char* end = nullptr;
  return sodium_hex2bin(out, size, hex.data(), hex.size(), nullptr, &length, &end) == 0 && length == size &&
         end == hex.data() + hex.size();
}

struct Signature {
  std::string key_id;
  std::string hex;
};

Result<std::vector<Signature>> signatures_of(const nlohmann::json& doc, const std::string& origin) {
  std::vector<Signature> out;
  if (!doc.contains("signatures")) return out;
  const auto& list = doc["signatures"];
  if (!list.is_array()) return make_error(ErrorCode::corrupt, origin + ": \"signatures\" is not a list");
  for (const auto& s : list) {
    if (!s.is_object() || !s.contains("key_id") || !s["key_id"].is_string() || !s.contains("ed25519") ||
        !s["ed25519"].is_string()) {
      return make_error(ErrorCode::corrupt, origin + ": a signature needs \"key_id\" and \"ed25519\"");
    }
    out.push_back({s["key_id"].get<std::string>(), s["ed25519"].get<std::string>()});
  }
  return out;
}

}  // namespace

Result<std::string> sign_manifest(std::string_view manifest_text, const SecretKey& key, const std::string& origin) {
  if (sodium_init() < 0) return make_error(ErrorCode::internal, "libsodium cannot start");
  auto doc = parse_object(manifest_text, origin);
  if (!doc) return doc.error();
  auto message = signed_bytes(*doc, origin);
  if (!message) return message.error();
  unsigned char signature[crypto_sign_BYTES];
  crypto_sign_detached(signature, nullptr, reinterpret_cast<const unsigned char*>(message->data()), message->size(),
                       reinterpret_cast<const unsigned char*>(key.bytes.data()));
  nlohmann::json list = nlohmann::json::array();
  if (doc->contains("signatures") && (*doc)["signatures"].is_array()) {
    for (const auto& s : (*doc)["signatures"]) {
      if (!(s.is_object() && s.value("key_id", "") == key.id)) list.push_back(s);
    }
  }
  list.push_back({{"key_id", key.id}, {"ed25519", to_hex(signature, sizeof signature)}});
  (*doc)["signatures"] = std::move(list);
  return doc->dump(2) + "\n";
}

Result<std::vector<std::string>> manifest_signers(std::string_view manifest_text, const std::string& origin) {
  auto doc = parse_object(manifest_text, origin);
  if (!doc) return doc.error();
  auto signatures = signatures_of(*doc, origin);
  if (!signatures) return signatures.error();
  std::vector<std::string> ids;
  for (const auto& s : *signatures) ids.push_back(s.key_id);
  return ids;
}

Result<std::string> check_manifest_signature(std::string_view manifest_text, const std::vector<PublicKey>& trusted,
                                             const std::string& origin) {
  if (sodium_init() < 0) return make_error(ErrorCode::internal, "libsodium cannot start");
  auto doc = parse_object(manifest_text, origin);
  if (!doc) return doc.error();
  auto signatures = signatures_of(*doc, origin);
  if (!signatures) return signatures.error();
  if (signatures->empty()) {
    return make_error(ErrorCode::corrupt, origin + " carries no signature, and this machine requires one from its " +
                                              std::to_string(trusted.size()) +
                                              " trusted key(s) (sign it: kotae model sign)");
  }
  auto message = signed_bytes(*doc, origin);
  if (!message) return message.error();
  std::string untrusted, invalid;
  for (const auto& s : *signatures) {
    const auto key = std::find_if(trusted.begin(), trusted.end(), [&](const PublicKey& k) { return k.id == s.key_id; });
    if (key == trusted.end()) {
      untrusted += (untrusted.empty() ? "" : ", ") + s.key_id;
      continue;
    }
    unsigned char signature[crypto_sign_BYTES];
    if (from_hex(s.hex, signature, sizeof signature) &&
        crypto_sign_verify_detached(signature, reinterpret_cast<const unsigned char*>(message->data()), message->size(),
                                    reinterpret_cast<const unsigned char*>(key->bytes.data())) == 0) {
      return key->id;
    }
    invalid += (invalid.empty() ? "" : ", ") + s.key_id;
  }
  if (!invalid.empty()) {
    return make_error(ErrorCode::corrupt, origin + ": the signature by trusted key " + invalid +
                                              " does not match the manifest (was it edited after signing?)");
  }
  return make_error(ErrorCode::corrupt,
                    origin + " is signed only by keys this machine does not trust (" + untrusted + ")");
}

}  // namespace kotae
