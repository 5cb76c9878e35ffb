#pragma once
// `kotae model ...`: the integrity of installed models and the keys and signatures that vouch for them
// (assembly/model_files.h does the work; this prints it).
//
//   kotae model keygen --out PREFIX           PREFIX.key (secret, mode 0600) and PREFIX.pub
//   kotae model sign NAME --key PREFIX.key    adds the key's signature to DATA/models/NAME/manifest.json
//   kotae model verify NAME [--json]          every check on every file; exit 0 intact, 1 refused
//   kotae model add FILE.gguf --name NAME     installs a GGUF as DATA/models/NAME, with its manifest

#include <filesystem>
#include <string>

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

}  // namespace kotae::cli
