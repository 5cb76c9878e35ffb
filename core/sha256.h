#pragma once
// SHA-256 of bytes and files, as lowercase hex: how model files and documents are identified; and
// as the 32 bytes themselves (PKCE, keys derived from a secret).

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"

namespace kotae {

std::string sha256_hex(std::string_view bytes);
std::string sha256_bytes(std::string_view bytes);  // the 32 bytes of the digest
Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace kotae
