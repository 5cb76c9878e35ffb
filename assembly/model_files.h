#pragma once
// The models a data directory holds (DATA/models) as the commands that administer them see them:
// what is installed, whether each would load (model/model_integrity.h: the same gate loading uses),
// the keys that vouch for them, signing and adding. Results are JSON or plain values, ready to print:
// the commands never reach into model/ themselves.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kotae::assembly {

// One model's verdict: name, path, ok, status (ok, missing or corrupt), error (the first problem),
// signed_by, signers, files (each one's path, status and problem), signatures_required.
Result<nlohmann::json> model_verdict(const std::filesystem::path& data_dir, const std::string& name);

// Every installed model: name, kind, precision, dimension, max_length, required, source, description.
nlohmann::json installed_model_list(const std::filesystem::path& data_dir);

// Nothing when `name` is empty or an installed model of `kind`; else an invalid_argument that names
// the flag, what the model is instead or what is installed, and `how_to_install`.
Result<void> require_installed_model(const std::filesystem::path& data_dir, const std::string& flag,
                                     const std::string& name, const std::string& kind,
                                     const std::string& how_to_install);

// The ids of the keys whose signature every model must carry (none: signatures are not required).
Result<std::vector<std::string>> trusted_key_ids(const std::filesystem::path& data_dir);
// Where a public key is copied to be trusted on this machine.
std::filesystem::path trusted_keys_folder(const std::filesystem::path& data_dir);

// A new signing key: PREFIX.key (secret, mode 0600) and PREFIX.pub. Its id.
Result<std::string> make_signing_key(const std::filesystem::path& prefix, const std::string& comment);

struct ModelSigning {
  nlohmann::json verdict;    // the files' verdict before signing (signatures not yet required)
  bool signed_now = false;   // false: the files do not verify, nothing was signed
  std::string key_id;        // the signing key's
  bool key_trusted = false;  // whether this machine already trusts that key
  std::filesystem::path manifest;
};
// Adds the secret key's signature to DATA/models/NAME/manifest.json, replacing it in one rename.
Result<ModelSigning> sign_model(const std::filesystem::path& data_dir, const std::string& name,
                                const std::filesystem::path& secret_key);

struct AddedModel {
  std::filesystem::path file;  // DATA/models/NAME/model.gguf
  std::uintmax_t size = 0;
  std::string sha256;
};
// Installs a GGUF as DATA/models/NAME with its manifest; copied aside and renamed into place, so a
// half-copied model never has its name.
Result<AddedModel> add_gguf_model(const std::filesystem::path& data_dir, const std::string& name,
                                  const std::filesystem::path& file, const std::string& description);

}  // namespace kotae::assembly

namespace kotae {
struct ModelInspection;
}
namespace kotae::assembly {
// The verdict's JSON for one inspection (model_verdict, and each model in `kotae doctor`).
nlohmann::json verdict_json(const ModelInspection& inspection);
}  // namespace kotae::assembly
