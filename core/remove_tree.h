#pragma once
// Deletes a folder and everything in it. A reader still finishing its work may create a file there
// meanwhile (SQLite's -shm when a connection opens), which leaves the folder "not empty" for a
// moment: the removal is tried again a few times, 20 ms apart, before it is an error.

#include <filesystem>

#include "core/result.h"

namespace kotae {

Result<void> remove_tree(const std::filesystem::path& dir);

}  // namespace kotae
