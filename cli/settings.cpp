#include "cli/settings.h"

#include <cstdlib>
#include <fstream>

namespace kotae::cli {
namespace {

namespace fs = std::filesystem;

// CLI11 names an option "--port"; the file says "port" (or "port" with '_' for '-').
CLI::Option* option_named(CLI::App& app, std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  for (CLI::Option* option : app.get_options()) {
    if (option->check_lname(name)) return option;
  }
  return nullptr;
}

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

bool given_as_flag(const CLI::Option& option, const std::vector<std::string>& arguments) {
  for (const auto& name : option.get_lnames()) {
    for (const auto& a : arguments) {
      if (a == "--" + name || a.starts_with("--" + name + "=")) return true;
    }
  }
  return false;
}

}  // namespace

Result<std::optional<SettingsFile>> read_settings_file(const std::string& given) {
  fs::path path = given;
  if (path.empty()) {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    const char* home = std::getenv("HOME");
    const fs::path user = xdg && *xdg     ? fs::path(xdg) / "kotae" / "config.toml"
                          : home && *home ? fs::path(home) / ".config" / "kotae" / "config.toml"
                                          : fs::path();
    std::error_code ec;
    for (const auto& candidate : {user, fs::path("/etc/kotae/config.toml")}) {
      if (!candidate.empty() && fs::exists(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) return std::optional<SettingsFile>();
  }
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::invalid_argument, "cannot read the settings file " + path.string());
  SettingsFile file{path, {}};
  try {
    file.items = CLI::ConfigTOML().from_config(in);
  } catch (const CLI::ParseError& e) {
    return make_error(ErrorCode::invalid_argument, path.string() + ": " + e.what());
  }
  return std::optional<SettingsFile>(std::move(file));
}

Result<void> apply_settings_file(CLI::App& root, const std::map<std::string, CLI::App*>& sections,
                                 const SettingsFile& file) {
  for (const auto& item : file.items) {
    if (item.name == "++" || item.name == "--") continue;  // CLI11's markers of a section's start and end
    CLI::App* app = &root;
    if (!item.parents.empty()) {
      const auto it = sections.find(item.parents.front());
      if (it == sections.end() || item.parents.size() > 1) {
        return make_error(ErrorCode::invalid_argument,
                          file.path.string() + ": no section [" + joined(item.parents) + "]");
      }
      app = it->second;
    }
    CLI::Option* option = option_named(*app, item.name);
    if (!option || option->check_lname("config") || option->check_lname("help")) {
      return make_error(ErrorCode::invalid_argument, file.path.string() + ": '" + item.fullname() +
                                                         "' is not a setting (`kotae config show` lists them)");
    }
    if (option->count() > 0) continue;  // a flag or the environment said otherwise
    try {
      if (option->get_expected_min() == 0) {  // a flag: "true"/"false" as CLI11 reads a flag's value
        if (item.inputs.size() != 1) throw CLI::ConversionError::TooManyInputsFlag(item.fullname());
        option->add_result(option->get_flag_value(item.name, item.inputs.front()));
      } else {
        option->add_result(item.inputs);
      }
      option->run_callback();
    } catch (const CLI::ParseError& e) {
      return make_error(ErrorCode::invalid_argument, file.path.string() + ": " + item.fullname() + ": " + e.what());
    }
  }
  return {};
}

std::vector<Setting> effective_settings(const CLI::App& command, const std::string& section,
                                        const std::vector<std::string>& arguments,
                                        const std::optional<SettingsFile>& file, const std::vector<std::string>& skip) {
  std::vector<Setting> rows;
  for (const CLI::Option* option : command.get_options()) {
    const auto& names = option->get_lnames();
    if (names.empty() || option->check_lname("help")) continue;
    if (std::find(skip.begin(), skip.end(), names.front()) != skip.end()) continue;
    const std::string env = option->get_envname();
    const bool flag = option->get_expected_min() == 0;  // on or off
    std::string value = option->count() > 0 ? joined(option->results()) : option->get_default_str();
    if (flag) value = option->count() > 0 && option->as<bool>() ? "true" : "false";
    // A list's default reads "[a,b]" in CLI11; shown as its given values are: "a,b".
    if (option->get_expected_max() > 1 && value.size() >= 2 && value.front() == '[' && value.back() == ']')
      value = value.substr(1, value.size() - 2);
    Setting row{
        names.front(), value, "default", env, option->get_description(), section, option->get_expected_max() > 1};
    if (option->count() > 0) {
      if (given_as_flag(*option, arguments)) {
        row.source = "flag";
      } else if (!env.empty() && std::getenv(env.c_str())) {
        row.source = "env " + env;
      } else if (file) {
        row.source = "file " + file->path.string();
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kotae::cli
