#include "text/loaders/zip_archive.h"

#include <zip.h>

#include <cctype>

#include <algorithm>
#include <vector>

namespace kotae::text {
namespace {

struct CloseFile {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

}  // namespace

Error limit_error(std::string_view what, std::string_view limit, std::uint64_t value) {
  return make_error(ErrorCode::invalid_argument,
                    std::string(what) + ", over " + std::string(limit) + " (" + std::to_string(value) + ")");
}

std::string resolve_zip_path(std::string_view folder, std::string_view target) {
  std::string decoded;  // %20 and the like, as hrefs in EPUB manifests carry them
  for (std::size_t i = 0; i < target.size(); ++i) {
    const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
    if (target[i] == '%' && i + 2 < target.size() && hex(target[i + 1]) && hex(target[i + 2])) {
      decoded += static_cast<char>(std::stoi(std::string(target.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else if (target[i] == '#') {
      break;  // a fragment names a place in the entry, not another entry
    } else {
      decoded += target[i];
    }
  }
  std::vector<std::string_view> pieces;
  const auto push = [&pieces](std::string_view path) {
    while (!path.empty()) {
      const auto slash = path.find('/');
      const std::string_view piece = path.substr(0, slash);
      if (piece == "..") {
        if (!pieces.empty()) pieces.pop_back();
      } else if (!piece.empty() && piece != ".") {
        pieces.push_back(piece);
      }
      if (slash == std::string_view::npos) break;
      path.remove_prefix(slash + 1);
    }
  };
  if (!decoded.starts_with('/')) push(folder);
  push(decoded);
  std::string out;
  for (const auto piece : pieces) {
    if (!out.empty()) out += '/';
    out += piece;
  }
  return out;
}

std::string zip_folder_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash));
}

void ZipArchive::Discard::operator()(zip* archive) const {
  zip_discard(archive);
}

ZipArchive::ZipArchive(zip* archive, std::string kind, std::uint64_t max_bytes)
    : archive_(archive), kind_(std::move(kind)), max_bytes_(max_bytes) {}
ZipArchive::ZipArchive(ZipArchive&&) noexcept = default;
ZipArchive& ZipArchive::operator=(ZipArchive&&) noexcept = default;
ZipArchive::~ZipArchive() = default;

Result<ZipArchive> ZipArchive::open(std::string_view bytes, std::string kind, std::uint64_t max_inflated_bytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* archive = source == nullptr ? nullptr : zip_open_from_source(source, ZIP_RDONLY, &error);
  if (archive == nullptr) {
    std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    if (source != nullptr) zip_source_free(source);
    return make_error(ErrorCode::corrupt, "corrupt " + kind + ": not a readable zip archive (" + reason + ")");
  }
  zip_error_fini(&error);
  return ZipArchive(archive, std::move(kind), max_inflated_bytes);
}

Result<std::optional<std::string>> ZipArchive::read(std::string_view name_view) {
  const std::string name(name_view);
  const zip_int64_t index = zip_name_locate(archive_.get(), name.c_str(), 0);
  if (index < 0) return std::optional<std::string>();
  const auto entry = static_cast<zip_uint64_t>(index);
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive_.get(), entry, 0, &stat) != 0) {
    return make_error(ErrorCode::corrupt, "corrupt " + kind_ + ": cannot read the zip entry " + name);
  }
  const std::uint64_t budget = max_bytes_ - inflated_;
  if ((stat.valid & ZIP_STAT_SIZE) != 0 && stat.size > budget) {
    return limit_error(kind_ + " entry " + name + " declares " + std::to_string(stat.size) + " bytes uncompressed",
                       "max_decompressed_bytes", max_bytes_);
  }
  std::unique_ptr<zip_file_t, CloseFile> file(zip_fopen_index(archive_.get(), entry, 0));
  if (!file) {
    return make_error(ErrorCode::corrupt, "corrupt " + kind_ + ": cannot open the zip entry " + name + " (" +
                                              zip_strerror(archive_.get()) + ")");
  }
  // The declared size may lie: count what is really inflated, and stop one byte past the budget.
  std::string content;
  char buffer[64 * 1024];
  for (;;) {
    const std::uint64_t room = max_bytes_ - inflated_ + 1;
    const zip_int64_t n = zip_fread(file.get(), buffer, std::min<std::uint64_t>(sizeof buffer, room));
    if (n < 0) {
      return make_error(ErrorCode::corrupt, "corrupt " + kind_ + ": cannot inflate the zip entry " + name + " (" +
                                                zip_file_strerror(file.get()) + ")");
    }
    if (n == 0) break;
    inflated_ += static_cast<std::uint64_t>(n);
    if (inflated_ > max_bytes_) {
      return limit_error(kind_ + " inflates to more bytes than allowed while reading " + name, "max_decompressed_bytes",
                         max_bytes_);
    }
    content.append(buffer, static_cast<std::size_t>(n));
  }
  return std::optional<std::string>(std::move(content));
}

Result<std::string> ZipArchive::read_required(std::string_view name) {
  auto entry = read(name);
  if (!entry) return entry.error();
  if (!*entry) return make_error(ErrorCode::corrupt, "corrupt " + kind_ + ": the archive has no " + std::string(name));
  return std::move(**entry);
}

}  // namespace kotae::text
