#pragma once
// SHA-256 of bytes and files, as lowercase hex: how model files and documents are identified.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"

namespace kotae {

std::string sha256_hex(std::string_view bytes);
Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace kotae
