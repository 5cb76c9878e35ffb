#pragma once
// Writing a file so that a crash leaves either the old contents or the new ones, never a torn
// mix: a temporary file beside it, fsync, rename over the target, fsync of the folder.

#include <filesystem>
#include <string_view>

#include "core/result.h"

namespace kotae::store {

Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view contents);

// Writes a file and fsyncs it (not atomic: a crash may leave it partly written). Its entry in its
// folder is durable after sync_folder, called once for many files.
Result<void> write_file_synced(const std::filesystem::path& path, std::string_view contents);

// Makes a rename or a new file in `folder` durable.
Result<void> sync_folder(const std::filesystem::path& folder);

// An io error for a failed system call: ENOSPC and EFBIG say "disk full or file too large".
Error system_error(int error_number, const std::filesystem::path& path, std::string_view doing);

}  // namespace kotae::store
