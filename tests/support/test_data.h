#pragma once
// Where tests find what scripts/setup installed: the same data directory the kotae binary uses.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/paths.h"

namespace kotae::testing {

// The whole file as bytes ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::filesystem::path model_dir(const std::string& name) {
  return models_dir(default_data_dir()) / name;
}

// Installs the installed model NAME into another models directory as hard links to its files (copies
// where the two are on different file systems): a real folder of regular files, as the integrity gate
// requires, without copying hundreds of megabytes. Tests must not modify these files: they are the
// installed model's. Returns false when a file cannot be linked or copied.
inline bool link_installed_model(const std::string& name, const std::filesystem::path& models) {
  std::error_code ec;
  std::filesystem::create_directories(models / name, ec);
  for (const auto& entry : std::filesystem::directory_iterator(model_dir(name), ec)) {
    const auto target = models / name / entry.path().filename();
    std::filesystem::create_hard_link(entry.path(), target, ec);
    if (ec) std::filesystem::copy_file(entry.path(), target, ec);
    if (ec) return false;
  }
  return !ec;
}

// A fresh, empty directory under the system temp folder, removed by the caller.
inline std::filesystem::path fresh_temp_dir(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() / (tag + "-" + std::to_string(::getpid()) + "-" +
                                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace kotae::testing
