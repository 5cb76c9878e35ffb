#include "core/paths.h"

#include <cstdlib>

namespace kotae {

std::filesystem::path default_data_dir() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (auto dir = env("KOTAE_DATA"); !dir.empty()) return dir;
  if (auto dir = env("XDG_DATA_HOME"); !dir.empty()) return std::filesystem::path(dir) / "kotae";
  if (auto home = env("HOME"); !home.empty()) return std::filesystem::path(home) / ".local/share/kotae";
  return ".kotae";
}

std::filesystem::path models_dir(const std::filesystem::path& data_dir) {
  std::error_code ec;
  auto own = data_dir / "models";
  if (std::filesystem::exists(own, ec) || !std::filesystem::is_directory(kPackagedModelsDir, ec)) return own;
  return kPackagedModelsDir;
}

}  // namespace kotae
