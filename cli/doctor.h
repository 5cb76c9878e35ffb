#pragma once
// `kotae doctor`: what this machine and this build can do, and whether every model verifies
// (assembly/doctor_report.h gathers it; this prints it).

#include <filesystem>

namespace kotae::cli {

// Prints the report (JSON or text) and returns the exit code: 0 healthy, 1 otherwise.
int run_doctor(const std::filesystem::path& data_dir, bool json);

}  // namespace kotae::cli
