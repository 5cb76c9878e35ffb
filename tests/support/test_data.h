#pragma once
// Where tests find what scripts/setup installed: the same data directory the kotae binary uses.

#include <gtest/gtest.h>

#include <filesystem>

#include "core/paths.h"

namespace kotae::testing {

inline std::filesystem::path model_dir(const std::string& name) { return models_dir(default_data_dir()) / name; }

// A fresh, empty directory under the system temp folder, removed by the caller.
inline std::filesystem::path fresh_temp_dir(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() /
             (tag + "-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace kotae::testing
