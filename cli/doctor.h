#pragma once
// `kotae doctor`: what this machine and this build can do, and whether every model verifies.

#include <filesystem>

#include <nlohmann/json.hpp>

namespace kotae::cli {

// The full report; "ok" is true when every required model verifies.
nlohmann::json doctor_report(const std::filesystem::path& data_dir);

// Prints the report (JSON or text) and returns the exit code: 0 healthy, 1 otherwise.
int run_doctor(const std::filesystem::path& data_dir, bool json);

}  // namespace kotae::cli
