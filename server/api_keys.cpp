#include "server/api_keys.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "assembly/collection_registry.h"
#include "core/sha256.h"

namespace kotae::server {

Result<ApiKeys> ApiKeys::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return make_error(ErrorCode::not_found, "cannot read the API key file " + file.string());
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("keys") || !json["keys"].is_array()) {
    return make_error(ErrorCode::invalid_argument,
                      file.string() + ": expected {\"keys\": [{\"name\", \"tenant\", \"sha256\", ...}]}");
  }
  // An empty list would mean an open server: a mistake to stop at, never a way to open one.
  if (json["keys"].empty()) {
    return make_error(ErrorCode::invalid_argument, file.string() +
                                                       ": the \"keys\" list is empty (without --api-keys "
                                                       "the server is open to loopback only)");
  }
  return from_entries(json["keys"], file.string());
}

Result<ApiKeys> ApiKeys::from_entries(const nlohmann::json& entries, const std::string& source) {
  auto bad = [&](const std::string& why) { return make_error(ErrorCode::invalid_argument, source + ": " + why); };
  ApiKeys keys;
  for (const auto& k : entries) {
    if (!k.is_object()) return bad("each key must be an object");
    ApiKey key;
    key.name = k.value("name", "");
    key.admin = k.value("admin", false);
    key.tenant = k.value("tenant", key.admin ? std::string(store::kLocalTenant) : "");
    key.rate_per_second = k.value("rate_per_second", 0.0);
    key.burst = k.value("burst", key.rate_per_second > 0 ? std::max(1.0, key.rate_per_second) : 0.0);
    const std::string hash = k.value("sha256", "");
    if (key.name.empty()) return bad("a key without a \"name\"");
    if (const auto role = k.find("role"); role != k.end()) {
      const auto named = role->is_string() ? role_named(role->get<std::string>()) : std::nullopt;
      if (!named) return bad("key '" + key.name + "': \"role\" must be reader, editor, owner or admin");
      key.role = *named;
    }
    if (!valid_tenant(key.tenant))
      return bad("key '" + key.name + "' needs a \"tenant\" of letters, digits, '_' and '-'");
    if (hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return bad("key '" + key.name +
                 "' needs \"sha256\": the key's SHA-256 in lower-case hex (kotae keygen prints it)");
    }
    if (key.rate_per_second < 0 || key.burst < 0) return bad("key '" + key.name + "' has a negative rate or burst");
    if (const auto quota = k.find("quota"); quota != k.end()) {
      if (!quota->is_object()) return bad("key '" + key.name + "': \"quota\" must be an object");
      for (auto [field, value] : {std::pair{"queued_jobs", &key.quota.queued_jobs},
                                  {"stored_bytes", &key.quota.stored_bytes},
                                  {"documents", &key.quota.documents}}) {
        const auto it = quota->find(field);
        if (it == quota->end()) continue;
        if (!it->is_number_unsigned())
          return bad("key '" + key.name + "': quota \"" + field + "\" must be a whole number");
        *value = it->get<std::uint64_t>();
      }
    }
    if (!keys.by_hash_.emplace(hash, std::move(key)).second) return bad("two keys have the same hash");
  }
  return keys;
}

Result<void> ApiKeys::add(const ApiKeys& more, const std::string& source) {
  for (const auto& [hash, key] : more.by_hash_) {
    if (!by_hash_.emplace(hash, key).second) {
      return make_error(ErrorCode::invalid_argument,
                        source + ": key '" + key.name + "' is also in the --api-keys file");
    }
  }
  return {};
}

const ApiKey* ApiKeys::find(std::string_view presented) const {
  if (presented.empty()) return nullptr;
  // Looked up by hash: the time taken tells nothing about how much of a real key was guessed.
  auto it = by_hash_.find(sha256_hex(presented));
  return it == by_hash_.end() ? nullptr : &it->second;
}

}  // namespace kotae::server
