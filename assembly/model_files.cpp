#include "assembly/model_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/paths.h"
#include "core/sha256.h"
#include "model/installed_models.h"
#include "model/manifest_signature.h"
#include "model/model_integrity.h"
#include "model/trusted_keys.h"

namespace kotae::assembly {
namespace {

namespace fs = std::filesystem;

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

}  // namespace

nlohmann::json verdict_json(const ModelInspection& r) {
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
                          {"refused_because", r.problem},
                          {"signers", r.signers},
                          {"files", files},
                          {"signed_by", r.signed_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.signed_by)}};
  if (!first_problem.empty()) entry["error"] = first_problem;
  return entry;
}

Result<nlohmann::json> model_verdict(const fs::path& data_dir, const std::string& name) {
  const auto policy = KOTAE_TRY_VALUE(integrity_policy(data_dir));
  nlohmann::json verdict = verdict_json(inspect_model(models_dir(data_dir), name, policy));
  verdict["signatures_required"] = !policy.trusted_keys.empty();
  return verdict;
}

nlohmann::json installed_model_list(const fs::path& data_dir) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : installed_models(models_dir(data_dir))) {
    const auto& manifest = m.manifest;
    list.push_back({{"name", m.name},
                    {"kind", manifest.kind},
                    {"precision", manifest.precision},
                    {"dimension", manifest.dimension},
                    {"max_length", manifest.max_length},
                    {"required", manifest.required},
                    {"source", manifest.source},
                    {"description", manifest.description}});
  }
  return list;
}

Result<void> require_installed_model(const fs::path& data_dir, const std::string& flag, const std::string& name,
                                     const std::string& kind, const std::string& how_to_install) {
  if (name.empty()) return {};
  for (const auto& m : installed_models(models_dir(data_dir))) {
    if (m.name != name) continue;
    if (m.manifest.kind == kind) return {};
    const auto article = [](const std::string& word) {
      return std::string(word.starts_with("e") ? "an " : "a ") + word;
    };
    return make_error(ErrorCode::invalid_argument, flag + " " + name + ": that model is " + article(m.manifest.kind) +
                                                       " model, not " + article(kind) + " one");
  }
  std::string installed;
  for (const auto& n : installed_model_names(models_dir(data_dir), kind))
    installed += (installed.empty() ? "" : ", ") + n;
  return make_error(ErrorCode::invalid_argument,
                    flag + " " + name + ": no " + kind + " model of that name is installed in " +
                        models_dir(data_dir).string() + " (installed: " + (installed.empty() ? "none" : installed) +
                        "; " + how_to_install + ")");
}

Result<std::vector<std::string>> trusted_key_ids(const fs::path& data_dir) {
  const auto policy = KOTAE_TRY_VALUE(integrity_policy(data_dir));
  std::vector<std::string> ids;
  for (const auto& key : policy.trusted_keys) ids.push_back(key.id);
  return ids;
}

fs::path trusted_keys_folder(const fs::path& data_dir) {
  return trusted_keys_dir(data_dir);
}

Result<std::string> make_signing_key(const fs::path& prefix, const std::string& comment) {
  const KeyPair pair = generate_key_pair();
  KOTAE_TRY(write_key_pair(pair, prefix, comment));
  return pair.public_key.id;
}

Result<ModelSigning> sign_model(const fs::path& data_dir, const std::string& name, const fs::path& secret_key) {
  const auto key = KOTAE_TRY_VALUE(read_secret_key(secret_key));
  const auto policy = KOTAE_TRY_VALUE(integrity_policy(data_dir));
  // The files must be intact before anyone vouches for them; the signature itself is what is being
  // added, so it is not required yet.
  IntegrityPolicy unsigned_policy = policy;
  unsigned_policy.trusted_keys.clear();
  const ModelInspection r = inspect_model(models_dir(data_dir), name, unsigned_policy);
  ModelSigning signing;
  signing.verdict = verdict_json(r);
  signing.verdict["signatures_required"] = false;
  signing.key_id = key.id;
  signing.manifest = r.dir / "manifest.json";
  if (!r.ok()) return signing;
  std::ifstream in(signing.manifest, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const auto signed_text = KOTAE_TRY_VALUE(sign_manifest(text.str(), key, signing.manifest.string()));
  KOTAE_TRY(replace_file(signing.manifest, signed_text));
  signing.signed_now = true;
  for (const auto& k : policy.trusted_keys) signing.key_trusted = signing.key_trusted || k.id == key.id;
  return signing;
}

Result<AddedModel> add_gguf_model(const fs::path& data_dir, const std::string& name, const fs::path& file,
                                  const std::string& description) {
  const fs::path root = models_dir(data_dir);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return make_error(ErrorCode::invalid_argument, "'" + name + "' is not a model name (a plain folder name)");
  }
  std::error_code ec;
  if (fs::exists(fs::symlink_status(root / name, ec)))
    return make_error(ErrorCode::already_exists, "a model named " + name + " exists in " + root.string());
  if (!fs::is_regular_file(file, ec)) return make_error(ErrorCode::not_found, "no file " + file.string());
  char magic[4] = {};
  std::ifstream(file, std::ios::binary).read(magic, sizeof magic);
  if (std::string_view(magic, 4) != "GGUF") {
    return make_error(ErrorCode::invalid_argument,
                      file.string() + " is not a GGUF file; ONNX models need a hand-written manifest (docs/models.md)");
  }
  // Copied into a hidden folder, then renamed into place: a half-copied model never has its name.
  const fs::path staging = root / ("." + name + ".adding-" + std::to_string(::getpid()));
  fs::create_directories(staging, ec);
  if (ec) return make_error(ErrorCode::io, "cannot create " + staging.string() + ": " + ec.message());
  auto abandon = [&](const std::string& why) {
    fs::remove_all(staging, ec);
    return make_error(ErrorCode::io, why);
  };
  if (!fs::copy_file(file, staging / "model.gguf", ec))
    return abandon("cannot copy " + file.string() + ": " + ec.message());
  auto digest = sha256_file(staging / "model.gguf");
  if (!digest) return abandon(digest.error().message);
  AddedModel added{root / name / "model.gguf", fs::file_size(staging / "model.gguf", ec), *digest};
  nlohmann::json manifest = {
      {"format", 1},
      {"name", name},
      {"kind", "generator"},
      {"required", false},
      {"description",
       description.empty() ? "added with kotae model add from " + fs::absolute(file).string() : description},
      {"files", {{{"path", "model.gguf"}, {"role", "gguf"}, {"size", added.size}, {"sha256", added.sha256}}}}};
  std::ofstream(staging / "manifest.json") << manifest.dump(2) << "\n";
  fs::rename(staging, root / name, ec);
  if (ec) return abandon("cannot install " + (root / name).string() + ": " + ec.message());
  return added;
}

}  // namespace kotae::assembly
