#pragma once
// What DATA/models holds: each folder with a manifest, read (not verified: that hashes every file, and
// a listing must be quick). Loading a model still verifies it.

#include <filesystem>
#include <string>
#include <vector>

#include "model/model_manifest.h"

namespace kotae {

struct InstalledModel {
  std::string name;  // the folder's name, which commands and requests use
  ModelManifest manifest;
};

// Sorted by name; a folder whose manifest cannot be read is left out.
std::vector<InstalledModel> installed_models(const std::filesystem::path& models_dir);

// The names of the installed models of one kind ("embedding", "reranker", "generator"), for messages
// that say what a mistyped name could have been.
std::vector<std::string> installed_model_names(const std::filesystem::path& models_dir, std::string_view kind);

}  // namespace kotae
