#pragma once
// A model's manifest (models/NAME/manifest.json): where it came from, what it is, and the SHA-256 of
// every file. Nothing loads a model whose files do not match it.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae {

struct ModelFile {
  std::string path;  // relative to the model's folder
  std::string role;  // "onnx", "tokenizer", "gguf", ...
  std::string sha256;
  std::uint64_t size = 0;
};

struct ModelManifest {
  std::string name;
  std::string kind;  // "embedding", "reranker", "generator"
  bool required = false;
  std::string description;
  std::string license;
  std::string source;  // "registry package@version"
  std::string precision;
  std::string pooling;  // "mean" or "cls" for encoders
  bool normalize = true;
  std::string query_prefix, passage_prefix;  // text put before each query / passage (encoders)
  int max_length = 0;
  int dimension = 0;
  int heads = 0;  // attention heads (encoders; the native CUDA encoder needs it)
  std::vector<std::string> inputs;
  std::string output;
  std::vector<ModelFile> files;

  const ModelFile* file_with_role(std::string_view role) const;
};

Result<ModelManifest> parse_model_manifest(std::string_view json, const std::string& origin);
Result<ModelManifest> load_model_manifest(const std::filesystem::path& model_dir);

enum class FileStatus { ok, missing, corrupt };
const char* to_string(FileStatus status);

struct FileCheck {
  std::string path;
  std::string expected_sha256;
  std::string actual_sha256;  // empty when missing
  FileStatus status = FileStatus::missing;
};

// Hashes every file of the manifest inside model_dir.
std::vector<FileCheck> verify_model_files(const std::filesystem::path& model_dir, const ModelManifest& manifest);

}  // namespace kotae
