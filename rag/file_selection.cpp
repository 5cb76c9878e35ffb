#include "rag/file_selection.h"

#include <fnmatch.h>

#include <algorithm>

#include "text/loaders/loader.h"

namespace kotae::rag {
namespace {

namespace fs = std::filesystem;

bool glob_matches(const std::string& pattern, const fs::path& relative) {
  const bool by_path = pattern.find('/') != std::string::npos;
  const std::string subject = by_path ? relative.generic_string() : relative.filename().string();
  return fnmatch(pattern.c_str(), subject.c_str(), 0) == 0;
}

bool any_matches(const std::vector<std::string>& patterns, const fs::path& relative) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) { return glob_matches(p, relative); });
}

bool selected(const FileSelection& selection, const fs::path& file, const fs::path& relative) {
  if (text::document_format(file).empty()) return false;
  if (!selection.include.empty() && !any_matches(selection.include, relative)) return false;
  return !any_matches(selection.exclude, relative);
}

}  // namespace

Result<std::vector<fs::path>> select_files(std::span<const fs::path> paths, const FileSelection& selection) {
  std::vector<fs::path> files;
  for (const auto& given : paths) {
    std::error_code ec;
    const auto status = fs::status(given, ec);
    if (ec || !fs::exists(status))
      return make_error(ErrorCode::not_found, given.string() + ": no such file or directory");
    const fs::path root = fs::absolute(given).lexically_normal();
    if (!fs::is_directory(status)) {
      // A file named explicitly is taken when a loader supports it, whatever the globs say.
      if (text::document_format(root).empty())
        return make_error(ErrorCode::unsupported,
                          given.string() + ": unsupported file type (supported: .txt .md .html .htm .pdf .docx)");
      files.push_back(root);
      continue;
    }
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) return make_error(ErrorCode::io, given.string() + ": " + ec.message());
    for (; it != end; it.increment(ec)) {
      if (ec) return make_error(ErrorCode::io, given.string() + ": " + ec.message());
      const auto& entry = *it;
      if (entry.path().filename().string().starts_with(".")) {
        if (entry.is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (!entry.is_regular_file(ec)) continue;
      if (selected(selection, entry.path(), entry.path().lexically_relative(root))) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace kotae::rag
