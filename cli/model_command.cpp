#include "cli/model_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/paths.h"
#include "core/sha256.h"
#include "model/manifest_signature.h"

namespace kotae::cli {
namespace {

namespace fs = std::filesystem;

int fail(const std::string& message, int code = 2) {
  std::fprintf(stderr, "kotae model: %s\n", message.c_str());
  return code;
}

std::string file_status(const FileVerdict& f) {
  if (f.problem.empty()) return "ok";
  return f.missing ? "missing" : "corrupt";
}

// Replaces `path` with `text` in one rename, so a reader sees the old manifest or the new one, never half.
Result<void> replace_file(const fs::path& path, const std::string& text) {
  struct stat st {};
  const mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0644;
  const fs::path tmp = path.string() + ".signing-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return make_error(ErrorCode::io, "cannot create " + tmp.string() + ": " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  if (::close(fd) != 0 || !written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::io, "cannot write " + path.string() + ": " + why);
  }
  if (const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

void print_inspection(const ModelInspection& r, const IntegrityPolicy& policy) {
  std::printf("model %s (%s)\n", r.name.c_str(), r.dir.string().c_str());
  std::string signature;
  if (!policy.trusted_keys.empty()) {
    signature = r.signed_by.empty() ? "not verified" : "valid, by trusted key " + r.signed_by;
  } else {
    signature = "not required (no trusted keys configured)";
    if (!r.signers.empty()) {
      signature += "; carries signatures by";
      for (const auto& id : r.signers) signature.append(" ").append(id);
    }
  }
  std::printf("  signature  %s\n", signature.c_str());
  if (!r.problem.empty()) std::printf("  REFUSED    %s\n", r.problem.c_str());
  for (const auto& f : r.files) {
    std::printf("  %-9s  %s%s%s\n", file_status(f).c_str(), f.path.c_str(), f.problem.empty() ? "" : "  ",
                f.problem.c_str());
  }
  std::printf("%s\n", r.ok() ? "verified: every check passed" : "refused: this model will not be loaded");
}

}  // namespace

nlohmann::json inspection_json(const ModelInspection& r) {
  nlohmann::json files = nlohmann::json::array();
  std::string status = r.problem.empty() ? "ok" : (r.problem_code == ErrorCode::not_found ? "missing" : "corrupt");
  std::string first_problem = r.problem;
  for (const auto& f : r.files) {
    const std::string s = file_status(f);
    files.push_back({{"path", f.path}, {"status", s}, {"problem", f.problem}});
    if (s == "corrupt") status = "corrupt";
    if (s == "missing" && status == "ok") status = "missing";
    if (first_problem.empty() && !f.problem.empty()) first_problem = f.path + " " + f.problem;
  }
  nlohmann::json entry = {{"name", r.name},
                          {"path", r.dir.string()},
                          {"ok", r.ok()},
                          {"status", status},
                          {"signers", r.signers},
                          {"files", files},
                          {"signed_by", r.signed_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.signed_by)}};
  if (!first_problem.empty()) entry["error"] = first_problem;
  return entry;
}

int run_model_keygen(const ModelCommandOptions& o) {
  if (o.out.empty()) return fail("--out PREFIX is needed");
  const KeyPair pair = generate_key_pair();
  const std::string comment = o.comment.empty() ? o.out.filename().string() : o.comment;
  if (auto ok = write_key_pair(pair, o.out, comment); !ok) return fail(ok.error().message);
  std::printf("key %s\n  secret  %s.key (keep it private; mode 0600)\n  public  %s.pub\n", pair.public_key.id.c_str(),
              o.out.string().c_str(), o.out.string().c_str());
  std::printf("To trust it: copy %s.pub into %s (or list it in KOTAE_TRUSTED_KEYS).\n", o.out.string().c_str(),
              trusted_keys_dir(o.data_dir).string().c_str());
  return 0;
}

int run_model_sign(const ModelCommandOptions& o) {
  auto key = read_secret_key(o.key);
  if (!key) return fail(key.error().message);
  auto policy = integrity_policy(o.data_dir);
  if (!policy) return fail(policy.error().message);
  // The files must be intact before anyone vouches for them; the signature itself is what is being
  // added, so it is not required yet.
  IntegrityPolicy unsigned_policy = *policy;
  unsigned_policy.trusted_keys.clear();
  const ModelInspection r = inspect_model(models_dir(o.data_dir), o.name, unsigned_policy);
  if (!r.ok()) {
    print_inspection(r, unsigned_policy);
    return fail("model " + o.name + " does not verify; it is not signed", 1);
  }
  const fs::path manifest = r.dir / "manifest.json";
  std::ifstream in(manifest, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto signed_text = sign_manifest(text.str(), *key, manifest.string());
  if (!signed_text) return fail(signed_text.error().message);
  if (auto ok = replace_file(manifest, *signed_text); !ok) return fail(ok.error().message);
  std::printf("signed %s with key %s (%s)\n", o.name.c_str(), key->id.c_str(), manifest.string().c_str());
  bool trusted = false;
  for (const auto& k : policy->trusted_keys) trusted = trusted || k.id == key->id;
  if (!trusted) {
    std::printf(
        "note: key %s is not trusted on this machine; signatures are only required once a key is "
        "(copy its .pub into %s)\n",
        key->id.c_str(), trusted_keys_dir(o.data_dir).string().c_str());
  }
  return 0;
}

int run_model_verify(const ModelCommandOptions& o) {
  auto policy = integrity_policy(o.data_dir);
  if (!policy) return fail(policy.error().message);
  const ModelInspection r = inspect_model(models_dir(o.data_dir), o.name, *policy);
  if (o.json) {
    nlohmann::json report = inspection_json(r);
    report["signatures_required"] = !policy->trusted_keys.empty();
    std::cout << report.dump() << "\n";
  } else {
    print_inspection(r, *policy);
  }
  return r.ok() ? 0 : 1;
}

int run_model_add(const ModelCommandOptions& o) {
  const fs::path root = models_dir(o.data_dir);
  if (o.name.empty() || o.name == "." || o.name == ".." || o.name.find('/') != std::string::npos) {
    return fail("'" + o.name + "' is not a model name (a plain folder name)");
  }
  std::error_code ec;
  if (fs::exists(fs::symlink_status(root / o.name, ec)))
    return fail("a model named " + o.name + " exists in " + root.string());
  if (!fs::is_regular_file(o.file, ec)) return fail("no file " + o.file.string());
  char magic[4] = {};
  std::ifstream(o.file, std::ios::binary).read(magic, sizeof magic);
  if (std::string_view(magic, 4) != "GGUF") {
    return fail(o.file.string() + " is not a GGUF file; ONNX models need a hand-written manifest (docs/models.md)");
  }
  // Copied into a hidden folder, then renamed into place: a half-copied model never has its name.
  const fs::path staging = root / ("." + o.name + ".adding-" + std::to_string(::getpid()));
  fs::create_directories(staging, ec);
  if (ec) return fail("cannot create " + staging.string() + ": " + ec.message());
  auto abandon = [&](const std::string& why) {
    fs::remove_all(staging, ec);
    return fail(why);
  };
  if (!fs::copy_file(o.file, staging / "model.gguf", ec))
    return abandon("cannot copy " + o.file.string() + ": " + ec.message());
  auto digest = sha256_file(staging / "model.gguf");
  if (!digest) return abandon(digest.error().message);
  const auto size = fs::file_size(staging / "model.gguf", ec);
  nlohmann::json manifest = {
      {"format", 1},
      {"name", o.name},
      {"kind", "generator"},
      {"required", false},
      {"description",
       o.description.empty() ? "added with kotae model add from " + fs::absolute(o.file).string() : o.description},
      {"files", {{{"path", "model.gguf"}, {"role", "gguf"}, {"size", size}, {"sha256", *digest}}}}};
  std::ofstream(staging / "manifest.json") << manifest.dump(2) << "\n";
  fs::rename(staging, root / o.name, ec);
  if (ec) return abandon("cannot install " + (root / o.name).string() + ": " + ec.message());
  std::printf("added %s (%s, %ju bytes, sha256 %s)\nUse it: kotae ask QUESTION -c COLLECTION --model %s\n",
              o.name.c_str(), (root / o.name / "model.gguf").string().c_str(), static_cast<std::uintmax_t>(size),
              digest->c_str(), o.name.c_str());
  return 0;
}

}  // namespace kotae::cli
