#include "model/installed_models.h"

#include <algorithm>

namespace kotae {

std::vector<InstalledModel> installed_models(const std::filesystem::path& models_dir) {
  std::vector<InstalledModel> models;
  std::error_code ec;
  for (const auto& child : std::filesystem::directory_iterator(models_dir, ec)) {
    if (!child.is_directory(ec)) continue;
    auto manifest = load_model_manifest(child.path());
    if (manifest) models.push_back({child.path().filename().string(), std::move(*manifest)});
  }
  std::sort(models.begin(), models.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return models;
}

std::vector<std::string> installed_model_names(const std::filesystem::path& models_dir, std::string_view kind) {
  std::vector<std::string> names;
  for (const auto& m : installed_models(models_dir)) {
    if (m.manifest.kind == kind) names.push_back(m.name);
  }
  return names;
}

}  // namespace kotae
