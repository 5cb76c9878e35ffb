#include "model/model_manifest.h"

#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/sha256.h"

namespace kotae {
namespace {

// A manifest may only name files inside its own folder.
bool is_safe_relative_path(const std::string& path) {
  if (path.empty()) return false;
  const std::filesystem::path p(path);
  if (p.is_absolute()) return false;
  for (const auto& part : p) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

// A non-negative integer member; `fallback` when absent, or required when there is none. nlohmann's
// get<int>() casts a float with undefined behaviour when it is out of range ("size": 9e132, found by
// fuzz/manifest) and wraps big integers silently: both are refused here instead.
template <class Int>
Int count_member(const nlohmann::json& object, const char* key, std::optional<Int> fallback) {
  if (fallback && !object.contains(key)) return *fallback;
  const auto& value = object.at(key);
  constexpr auto most = static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() > most) {
    throw nlohmann::json::type_error::create(
        302, std::string("'") + key + "' must be an integer from 0 to " + std::to_string(most), &value);
  }
  return static_cast<Int>(value.get<std::uint64_t>());
}

}  // namespace

const ModelFile* ModelManifest::file_with_role(std::string_view role) const {
  for (const auto& f : files) {
    if (f.role == role) return &f;
  }
  return nullptr;
}

Result<ModelManifest> parse_model_manifest(std::string_view text, const std::string& origin) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return make_error(ErrorCode::corrupt, origin + ": not a JSON object");
  try {
    ModelManifest m;
    m.name = doc.at("name").get<std::string>();
    m.kind = doc.at("kind").get<std::string>();
    m.required = doc.value("required", false);
    m.description = doc.value("description", "");
    m.license = doc.value("license", "");
    if (const auto& s = doc.value("source", nlohmann::json::object()); s.is_object()) {
      m.source = s.value("registry", "") + " " + s.value("package", "") + "@" + s.value("version", "");
    }
    m.precision = doc.value("precision", "");
    m.pooling = doc.value("pooling", "");
    m.normalize = doc.value("normalize", true);
    m.query_prefix = doc.value("query_prefix", "");
    m.passage_prefix = doc.value("passage_prefix", "");
    m.max_length = count_member<int>(doc, "max_length", 0);
    m.heads = count_member<int>(doc, "heads", 0);
    m.dimension = count_member<int>(doc, "dimension", 0);
    m.inputs = doc.value("inputs", std::vector<std::string>{});
    m.output = doc.value("output", "");
    for (const auto& f : doc.at("files")) {
      ModelFile file{f.at("path").get<std::string>(), f.value("role", ""), f.at("sha256").get<std::string>(),
                     count_member<std::uint64_t>(f, "size", std::nullopt)};
      if (!is_safe_relative_path(file.path)) {
        return make_error(ErrorCode::corrupt, origin + ": file path '" + file.path + "' leaves the model folder");
      }
      if (file.sha256.size() != 64) {
        return make_error(ErrorCode::corrupt, origin + ": '" + file.path + "' has no valid sha256");
      }
      m.files.push_back(std::move(file));
    }
    if (m.files.empty()) return make_error(ErrorCode::corrupt, origin + ": lists no files");
    return m;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::corrupt, origin + ": " + e.what());
  }
}

Result<ModelManifest> load_model_manifest(const std::filesystem::path& model_dir) {
  const auto path = model_dir / "manifest.json";
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::not_found, "no model manifest at " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_model_manifest(text.str(), path.string());
}

const char* to_string(FileStatus status) {
  switch (status) {
    case FileStatus::ok: return "ok";
    case FileStatus::missing: return "missing";
    case FileStatus::corrupt: return "corrupt";
  }
  return "corrupt";
}

std::vector<FileCheck> verify_model_files(const std::filesystem::path& model_dir, const ModelManifest& manifest) {
  std::vector<FileCheck> checks;
  for (const auto& file : manifest.files) {
    FileCheck check{file.path, file.sha256, {}, FileStatus::missing};
    const auto path = model_dir / file.path;
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      auto digest = sha256_file(path);
      check.actual_sha256 = digest ? *digest : std::string();
      check.status = digest && *digest == file.sha256 ? FileStatus::ok : FileStatus::corrupt;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace kotae
