#include "model/model_integrity.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "model/manifest_signature.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxManifestBytes = 1 << 20;

// A file descriptor, closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

bool is_plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

struct Opened {
  Fd fd;
  std::string problem;
  bool missing = false;
  std::uint64_t size = 0;
};

// Opens `relative` under `dir` as a regular file, following no symlink at any step (O_NOFOLLOW on each
// component): the file read is the one inside the folder, whatever links exist or appear.
Opened open_regular_file(int dir, const std::string& relative) {
  Opened out;
  Fd current(::dup(dir));
  std::vector<std::string> parts;
  for (const auto& part : fs::path(relative)) parts.push_back(part.string());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const char* part = parts[i].c_str();
    struct stat st {};
    if (::fstatat(current.get(), part, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      out.missing = errno == ENOENT;
      out.problem = out.missing ? "is missing" : std::string("cannot be read: ") + std::strerror(errno);
      return out;
    }
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlinkat(current.get(), part, target, sizeof target - 1);
      const std::string to = n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "?";
      out.problem = (last ? std::string("is a symlink") : "lies behind a symlink (" + parts[i] + ")") + " to " + to +
                    ": model files must be regular files inside the model folder";
      return out;
    }
    if (!last && !S_ISDIR(st.st_mode)) {
      out.missing = true;
      out.problem = "is missing (" + parts[i] + " is not a folder)";
      return out;
    }
    if (last && !S_ISREG(st.st_mode)) {
      out.problem = "is not a regular file";
      return out;
    }
    const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY);
    Fd next(::openat(current.get(), part, flags));
    if (next.get() < 0) {
      out.problem = std::string("cannot be opened: ") + std::strerror(errno);
      return out;
    }
    current = std::move(next);
  }
  struct stat st {};
  if (::fstat(current.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    out.problem = "is not a regular file";
    return out;
  }
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.fd = std::move(current);
  return out;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// A shared library by its name: libx.so, libx.so.1, x.dll, x.dylib, x.pyd.
bool has_library_name(const std::string& path) {
  const std::string name = lower(fs::path(path).filename().string());
  for (const char* suffix : {".so", ".dll", ".dylib", ".pyd"}) {
    if (name.ends_with(suffix)) return true;
  }
  const auto so = name.find(".so.");
  return so != std::string::npos && so + 4 < name.size() && std::isdigit(static_cast<unsigned char>(name[so + 4]));
}

bool is_library_role(const std::string& role) {
  const std::string r = lower(role);
  return r.find("custom") != std::string::npos || r.find("librar") != std::string::npos ||
         r.find("plugin") != std::string::npos || r == "ops" || r == "op";
}

// What kind of executable code the file's first bytes say it is; empty when none.
std::string executable_format(int fd, std::uint64_t size) {
  unsigned char head[64] = {};
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  if (n >= 4 && std::memcmp(head,
                            "\x7f"
                            "ELF",
                            4) == 0)
    return "an ELF binary (shared library or program)";
  if (n >= 4) {
    const std::uint32_t magic =
        (std::uint32_t{head[0]} << 24) | (std::uint32_t{head[1]} << 16) | (std::uint32_t{head[2]} << 8) | head[3];
    for (const std::uint32_t m : {0xFEEDFACEu, 0xFEEDFACFu, 0xCEFAEDFEu, 0xCFFAEDFEu, 0xCAFEBABEu, 0xBEBAFECAu}) {
      if (magic == m) return "a Mach-O binary";
    }
  }
  // "MZ" alone is too weak (a safetensors header length can start with it): require the PE signature.
  if (n == sizeof head && head[0] == 'M' && head[1] == 'Z') {
    const std::uint32_t offset = std::uint32_t{head[0x3c]} | (std::uint32_t{head[0x3d]} << 8) |
                                 (std::uint32_t{head[0x3e]} << 16) | (std::uint32_t{head[0x3f]} << 24);
    char pe[4] = {};
    if (std::uint64_t{offset} + 4 <= size && ::pread(fd, pe, 4, offset) == 4 && std::memcmp(pe, "PE\0\0", 4) == 0) {
      return "a Windows PE binary (DLL or program)";
    }
  }
  return {};
}

// SHA-256 (hex) of exactly `size` bytes; empty, with `problem` set, when the file cannot be read or its
// length changed since it was checked.
std::string sha256_of(int fd, std::uint64_t size, std::string& problem) {
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<unsigned char> buffer(std::size_t{1} << 20);
  std::uint64_t total = 0;
  while (total <= size) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(total));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      problem = std::string("cannot be read: ") + std::strerror(errno);
      return {};
    }
    if (n == 0) break;
    crypto_hash_sha256_update(&state, buffer.data(), static_cast<unsigned long long>(n));
    total += static_cast<std::uint64_t>(n);
  }
  if (total != size) {
    problem = "changed size while it was being hashed";
    return {};
  }
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

std::string bytes_text(std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes";
}

// The cheap checks of one file, before it is hashed: its fd and size, or the problem.
Opened check_file(int dir, const ModelFile& file, const IntegrityPolicy& policy) {
  if (has_library_name(file.path) || is_library_role(file.role)) {
    Opened out;
    out.problem = "is a shared library (role '" + file.role +
                  "'): Kotae never loads operator or plugin libraries from a model folder";
    return out;
  }
  if (file.size > policy.max_file_bytes) {
    Opened out;
    out.problem = "is " + bytes_text(file.size) + " by its manifest, over the limit of " +
                  bytes_text(policy.max_file_bytes) + " (KOTAE_MAX_MODEL_BYTES)";
    return out;
  }
  Opened opened = open_regular_file(dir, file.path);
  if (!opened.problem.empty()) return opened;
  auto fail = [&](std::string why) {
    opened.problem = std::move(why);
    opened.fd = Fd();
    return std::move(opened);
  };
  if (opened.size < file.size) {
    return fail("is truncated: " + bytes_text(opened.size) + ", manifest says " + bytes_text(file.size));
  }
  if (opened.size > file.size) {
    return fail("is oversized: " + bytes_text(opened.size) + ", manifest says " + bytes_text(file.size));
  }
  if (const auto format = executable_format(opened.fd.get(), opened.size); !format.empty()) {
    return fail("is " + format + ": Kotae never loads operator or plugin libraries from a model folder");
  }
  return opened;
}

Result<std::string> read_all(int fd, std::uint64_t size, const std::string& origin) {
  std::string text(size, '\0');
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, text.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(ErrorCode::io, "cannot read " + origin);
    done += static_cast<std::uint64_t>(n);
  }
  return text;
}

// Entries of the folder that are neither manifest.json nor a file the manifest lists (nor a folder on
// the way to one). ONNX Runtime finds a graph's external data by name in the model's folder, so an
// unlisted file would be read unverified; and a dropped-in library has no business there either.
std::vector<std::string> unlisted_entries(const fs::path& dir, const ModelManifest& manifest) {
  std::vector<std::string> listed = {"manifest.json"};
  for (const auto& f : manifest.files) listed.push_back(fs::path(f.path).lexically_normal().generic_string());
  std::vector<std::string> stray;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (std::find(listed.begin(), listed.end(), rel) != listed.end()) continue;
    const bool on_the_way =
        it->is_directory(ec) && !it->is_symlink(ec) &&
        std::any_of(listed.begin(), listed.end(), [&](const std::string& l) { return l.starts_with(rel + "/"); });
    if (on_the_way) continue;
    stray.push_back(rel);
    if (it->is_directory(ec)) it.disable_recursion_pending();
  }
  if (ec) stray.push_back("(the folder cannot be listed: " + ec.message() + ")");
  std::sort(stray.begin(), stray.end());
  return stray;
}

}  // namespace

bool ModelInspection::ok() const {
  return problem.empty() &&
         std::all_of(files.begin(), files.end(), [](const FileVerdict& f) { return f.problem.empty(); });
}

Result<IntegrityPolicy> integrity_policy(const fs::path& data_dir) {
  IntegrityPolicy policy;
  auto keys = load_trusted_keys(data_dir);
  if (!keys) return keys.error();
  policy.trusted_keys = std::move(*keys);
  if (const char* limit = std::getenv("KOTAE_MAX_MODEL_BYTES"); limit && *limit) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long bytes = std::strtoull(limit, &end, 10);
    if (errno != 0 || *end != '\0' || bytes == 0 || *limit == '-') {
      return make_error(ErrorCode::invalid_argument,
                        std::string("KOTAE_MAX_MODEL_BYTES='") + limit + "': a byte count");
    }
    policy.max_file_bytes = bytes;
  }
  return policy;
}

ModelInspection inspect_model(const fs::path& models_root, std::string_view name, const IntegrityPolicy& policy,
                              bool stop_early, std::string_view kind) {
  ModelInspection r;
  r.name = std::string(name);
  r.dir = models_root / name;
  auto refuse = [&](std::string why, ErrorCode code = ErrorCode::corrupt) {
    r.problem = std::move(why);
    r.problem_code = code;
    return r;
  };
  if (!is_plain_name(name)) {
    return refuse("'" + r.name + "' is not a model name (a folder directly in " + models_root.string() + ")",
                  ErrorCode::invalid_argument);
  }
  std::error_code ec;
  const fs::path root = fs::canonical(models_root, ec);
  if (ec) return refuse("there is no models directory " + models_root.string(), ErrorCode::not_found);
  const fs::path given = models_root / name;
  if (!fs::exists(fs::symlink_status(given, ec))) {
    return refuse("it is not installed (no folder " + given.string() + ")", ErrorCode::not_found);
  }
  const fs::path real = fs::canonical(given, ec);
  if (ec) return refuse("its folder " + given.string() + " cannot be resolved: " + ec.message());
  // A symlinked model folder may only point at another folder of the same models directory.
  if (real.parent_path() != root) {
    return refuse("its folder " + given.string() + " resolves to " + real.string() + ", outside the models directory " +
                  root.string());
  }
  r.dir = real;
  Fd dir(::open(real.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (dir.get() < 0)
    return refuse("cannot open its folder " + real.string() + ": " + std::strerror(errno), ErrorCode::io);

  const std::string origin = (given / "manifest.json").string();
  Opened manifest_file = open_regular_file(dir.get(), "manifest.json");
  if (!manifest_file.problem.empty()) {
    return refuse(origin + " " + manifest_file.problem,
                  manifest_file.missing ? ErrorCode::not_found : ErrorCode::corrupt);
  }
  if (manifest_file.size > kMaxManifestBytes) {
    return refuse(origin + " is " + bytes_text(manifest_file.size) + ", over the limit of " +
                  bytes_text(kMaxManifestBytes));
  }
  auto text = read_all(manifest_file.fd.get(), manifest_file.size, origin);
  if (!text) return refuse(text.error().message, text.error().code);
  if (auto signers = manifest_signers(*text, origin)) r.signers = std::move(*signers);
  // The signature first: an unsigned or forged manifest is not even parsed further.
  if (!policy.trusted_keys.empty()) {
    auto signer = check_manifest_signature(*text, policy.trusted_keys, origin);
    if (!signer) return refuse(signer.error().message);
    r.signed_by = *signer;
  }
  auto manifest = parse_model_manifest(*text, origin);
  if (!manifest) return refuse(manifest.error().message);
  r.manifest = std::move(*manifest);
  if (!kind.empty() && r.manifest.kind != kind) {
    return refuse("it is a " + r.manifest.kind + " model, not " + std::string(kind), ErrorCode::model);
  }

  // Every file's cheap checks before any file is hashed: a truncated file fails in microseconds.
  std::vector<std::pair<std::size_t, Opened>> to_hash;
  for (const auto& file : r.manifest.files) {
    Opened opened = check_file(dir.get(), file, policy);
    r.files.push_back({file.path, opened.problem, opened.missing});
    if (!opened.problem.empty()) {
      if (stop_early) return r;
      continue;
    }
    to_hash.emplace_back(r.files.size() - 1, std::move(opened));
  }
  for (const auto& stray : unlisted_entries(real, r.manifest)) {
    r.files.push_back({stray, "is not listed in the manifest: remove it, or list it with its sha256 and size", false});
    if (stop_early) return r;
  }
  for (auto& [index, opened] : to_hash) {
    const ModelFile& file = r.manifest.files[index];
    std::string problem;
    const std::string digest = sha256_of(opened.fd.get(), opened.size, problem);
    if (problem.empty() && digest != file.sha256) problem = "has sha256 " + digest + ", manifest says " + file.sha256;
    r.files[index].problem = problem;
    if (!problem.empty() && stop_early) return r;
  }
  return r;
}

Result<VerifiedModel> verify_model(const fs::path& models_root, std::string_view name, const IntegrityPolicy& policy,
                                   std::string_view kind) {
  ModelInspection r = inspect_model(models_root, name, policy, /*stop_early=*/true, kind);
  const std::string prefix = "model " + std::string(name) + " refused: ";
  if (!r.problem.empty()) return make_error(r.problem_code, prefix + r.problem);
  for (const auto& file : r.files) {
    if (file.problem.empty()) continue;
    return make_error(file.missing ? ErrorCode::not_found : ErrorCode::corrupt,
                      prefix + (models_root / name / file.path).string() + " " + file.problem);
  }
  return VerifiedModel{std::move(r.dir), std::move(r.manifest), std::move(r.signed_by)};
}

Result<VerifiedModel> verify_model_dir(const fs::path& model_dir, std::string_view kind) {
  fs::path dir = model_dir;
  if (dir.filename().empty()) dir = dir.parent_path();  // "models/x/"
  for (const auto& part : dir) {
    if (part == "..") {
      return make_error(
          ErrorCode::invalid_argument,
          "model folder " + model_dir.string() + " refused: a path with '..' may lead out of the models directory");
    }
  }
  const fs::path root = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  auto policy = integrity_policy(root.has_parent_path() ? root.parent_path() : root / "..");
  if (!policy) return policy.error();
  return verify_model(root, dir.filename().string(), *policy, kind);
}

bool is_inside(const fs::path& path, const fs::path& folder) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return false;
  const fs::path f = fs::weakly_canonical(folder, ec);
  if (ec) return false;
  auto pi = p.begin();
  for (auto fi = f.begin(); fi != f.end(); ++fi, ++pi) {
    if (fi->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *fi) return false;
  }
  return true;
}

}  // namespace kotae
