#pragma once
// `kotae model ...`: the integrity of installed models (model/model_integrity.h) and the keys and
// signatures that vouch for them.
//
//   kotae model keygen --out PREFIX           PREFIX.key (secret, mode 0600) and PREFIX.pub
//   kotae model sign NAME --key PREFIX.key    adds the key's signature to DATA/models/NAME/manifest.json
//   kotae model verify NAME [--json]          every check on every file; exit 0 intact, 1 refused
//   kotae model add FILE.gguf --name NAME     installs a GGUF as DATA/models/NAME, with its manifest

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_integrity.h"

namespace kotae::cli {

struct ModelCommandOptions {
  std::filesystem::path data_dir;
  std::string name;            // sign, verify, add
  std::filesystem::path key;   // sign: the secret key file
  std::filesystem::path out;   // keygen: the prefix of the two key files
  std::string comment;         // keygen: written after the public key
  std::filesystem::path file;  // add: the GGUF file
  std::string description;     // add
  bool json = false;           // verify
};

int run_model_keygen(const ModelCommandOptions& options);
int run_model_sign(const ModelCommandOptions& options);
int run_model_verify(const ModelCommandOptions& options);
int run_model_add(const ModelCommandOptions& options);

// One model's verdict as `kotae model verify --json` and `kotae doctor` print it: name, path, ok,
// status (ok, missing or corrupt), error (the first problem), signed_by, signers, and each file's
// path, status and problem.
nlohmann::json inspection_json(const ModelInspection& inspection);

}  // namespace kotae::cli
