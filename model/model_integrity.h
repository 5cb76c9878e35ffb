#pragma once
// The one gate a model passes before ONNX Runtime, llama.cpp or the CUDA encoder plugin reads any of
// its files. In this order, and nothing is hashed (or, with trusted keys, even parsed) until the
// cheaper checks before it pass:
//
//  1. the folder: a plain NAME whose real path (symlinks resolved) is a direct child of the models
//     directory's real path, so neither "../x" nor a symlinked folder leads out;
//  2. manifest.json: a regular file of at most 1 MiB; when trusted keys are configured, it must carry
//     a valid Ed25519 signature by one of them (model/manifest_signature.h), checked before parsing;
//  3. each file the manifest names: reached without following any symlink (a link could point
//     anywhere, and be re-aimed after the check), a regular file, not a shared library (by name,
//     role or magic bytes: operator libraries never come from model files), within the size limit,
//     and exactly the manifest's size (so a truncated or padded file fails before it is hashed);
//  4. each file's SHA-256.
//
// Every refusal is an ErrorCode::corrupt (missing files: not_found) whose message begins
// "model NAME refused: " and names the file and the reason.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/model_manifest.h"
#include "model/trusted_keys.h"

namespace kotae {

inline constexpr std::uint64_t kDefaultMaxModelFileBytes = std::uint64_t{64} << 30;  // 64 GiB

struct IntegrityPolicy {
  std::vector<PublicKey> trusted_keys;  // not empty: a valid signature by one of them is required
  std::uint64_t max_file_bytes = kDefaultMaxModelFileBytes;
};

// The policy of a data directory: load_trusted_keys(data_dir), and $KOTAE_MAX_MODEL_BYTES when set.
Result<IntegrityPolicy> integrity_policy(const std::filesystem::path& data_dir);

struct VerifiedModel {
  std::filesystem::path dir;  // the folder's real path: what the loaders open files under
  ModelManifest manifest;
  std::string signed_by;  // the trusted key id whose signature was checked; empty when none is required
};

// One file's verdict, for reports (kotae model verify).
struct FileVerdict {
  std::string path;
  std::string problem;  // empty: the file is intact
  bool missing = false;
};

struct ModelInspection {
  std::string name;
  std::filesystem::path dir;
  std::string problem;  // the first problem with the folder, the manifest or its signature; empty if none
  ErrorCode problem_code = ErrorCode::corrupt;
  std::string signed_by;
  std::vector<std::string> signers;  // every key id the manifest carries a signature by
  ModelManifest manifest;            // valid when the manifest was read
  std::vector<FileVerdict> files;
  bool ok() const;
};

// Runs every check on models_root/name and reports each file (stop_early: at the first problem,
// without hashing anything more, which is what loading wants).
ModelInspection inspect_model(const std::filesystem::path& models_root, std::string_view name,
                              const IntegrityPolicy& policy, bool stop_early = false, std::string_view kind = {});

// The gate: the model, or why it is refused. A non-empty `kind` ("embedding", "reranker",
// "generator") is checked as soon as the manifest is read, before any model file is.
Result<VerifiedModel> verify_model(const std::filesystem::path& models_root, std::string_view name,
                                   const IntegrityPolicy& policy, std::string_view kind = {});

// The gate for loaders given a model folder: DIR's parent is its models directory, and the data
// directory above that supplies the policy. A path with ".." in it is refused outright, so a name
// taken from a request can never climb out.
Result<VerifiedModel> verify_model_dir(const std::filesystem::path& model_dir, std::string_view kind = {});

// True when `path`, resolved, lies inside `folder`, resolved.
bool is_inside(const std::filesystem::path& path, const std::filesystem::path& folder);

}  // namespace kotae
