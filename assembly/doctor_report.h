#pragma once
// What this machine and this build can do (CPU, ONNX Runtime and its providers, llama.cpp and its
// kernels, GPUs and the CUDA plugin) and whether every model verifies, as one JSON object: what
// `kotae doctor` prints.

#include <filesystem>

#include <nlohmann/json.hpp>

namespace kotae::assembly {

// The full report; "ok" is true when every required model verifies.
nlohmann::json doctor_report(const std::filesystem::path& data_dir);

}  // namespace kotae::assembly
