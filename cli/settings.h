#pragma once
// Where a command's settings come from, weakest first: the built-in default, a TOML file, the
// environment (KOTAE_PORT, ...), a flag. The file is --config FILE (or $KOTAE_CONFIG); without one,
// $XDG_CONFIG_HOME/kotae/config.toml (~/.config/kotae/config.toml), else /etc/kotae/config.toml.
// Top-level keys set the global options (data = "...", log-level = "warn"); a [serve] section
// `kotae serve`'s (port = 9000), [worker] `kotae worker`'s, and so on.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/result.h"

namespace kotae::cli {

struct SettingsFile {
  std::filesystem::path path;
  std::vector<CLI::ConfigItem> items;
};

// The file `given` names (an error when it cannot be read), else the first of the user's and the
// system's that exists; none is fine.
Result<std::optional<SettingsFile>> read_settings_file(const std::string& given);

// Sets, from the file, each option no flag or variable set: on `root` for top-level keys, on
// sections[NAME] for a [NAME] section. A key or section that names no option is an error, so a
// misspelt setting stops the command instead of being ignored; so is a value the option refuses.
Result<void> apply_settings_file(CLI::App& root, const std::map<std::string, CLI::App*>& sections,
                                 const SettingsFile& file);

struct Setting {
  std::string name;         // the flag's name, without "--"
  std::string value;        // as the option holds it (lists comma-separated)
  std::string source;       // "default", "file PATH", "env NAME" or "flag"
  std::string env;          // the variable that sets it, if any
  std::string description;  // the flag's help
  std::string section;      // "" (top level) or "serve"
  bool list = false;        // takes several values (a TOML array; comma-separated in `value`)
};
// Every option of `command` (its help and the `skip` ones left out), after parsing and the file.
std::vector<Setting> effective_settings(const CLI::App& command, const std::string& section,
                                        const std::vector<std::string>& arguments,
                                        const std::optional<SettingsFile>& file,
                                        const std::vector<std::string>& skip = {});

}  // namespace kotae::cli
