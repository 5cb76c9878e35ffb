#pragma once
// Which files an ingestion takes: the given files, and every file under the given directories
// (recursively, hidden entries skipped), that a loader supports and that pass the include/exclude
// globs. A glob without '/' matches the file name ("*.md"); one with '/' matches the path relative
// to the directory given ("guide/*.html"; '*' also crosses '/').

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae::rag {

struct FileSelection {
  std::vector<std::string> include;  // empty: every supported file
  std::vector<std::string> exclude;
};

// Sorted, without duplicates. A path that does not exist is a not_found error.
Result<std::vector<std::filesystem::path>> select_files(std::span<const std::filesystem::path> paths,
                                                        const FileSelection& selection);

}  // namespace kotae::rag
