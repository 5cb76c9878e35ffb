#pragma once
// Ed25519 signatures of a model manifest, kept in the manifest itself:
//
//   "signatures": [{"key_id": "3f1c...", "ed25519": "HEX"}]
//
// What is signed is the manifest's canonical text: the JSON object without its "signatures" member,
// written compactly with its keys sorted (nlohmann's dump), after a fixed context line. Re-indenting
// or reordering the file keeps a signature valid; changing any value, including a file's sha256 or
// size, breaks it. As the manifest names every file with its SHA-256 and size, one signature covers
// the whole model. Kept inside the manifest (not a manifest.sig beside it) so a model folder cannot
// lose its signature on the way, and several keys can sign one model.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/trusted_keys.h"

namespace kotae {

// The manifest text with this key's signature added (an earlier one by the same key is replaced).
Result<std::string> sign_manifest(std::string_view manifest_text, const SecretKey& key, const std::string& origin);

// The key ids of the signatures a manifest carries (checked or not).
Result<std::vector<std::string>> manifest_signers(std::string_view manifest_text, const std::string& origin);

// The id of a trusted key whose signature over the manifest is valid; an error that says why not
// (no signature, only untrusted keys, or a signature that does not match: edited after signing).
Result<std::string> check_manifest_signature(std::string_view manifest_text, const std::vector<PublicKey>& trusted,
                                             const std::string& origin);

}  // namespace kotae
