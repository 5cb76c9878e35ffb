// Settings as an operator gives them (cli/settings.h): a file, the environment and flags, in that
// order of strength; `kotae config show` says what is in effect and from where; docs/config.example.toml
// lists every setting and each of its lines is accepted; a misspelt key, a bad value, a model that is
// not installed or a malformed URL stops the command before it starts anything.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/paths.h"
#include "support/command_runner.h"
#include "support/test_data.h"

namespace kotae::testing {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fresh_temp_dir("kotae-config");
    fs::create_directories(root_ / "xdg" / "kotae");
    fs::create_directories(root_ / "data");
    fs::create_directory_symlink(models_dir(default_data_dir()), root_ / "data" / "models");
  }
  void TearDown() override { fs::remove_all(root_); }

  // The binary with only the environment given (no user's or system's settings file leaks in: HOME and
  // XDG_CONFIG_HOME point into the test's folder; /etc/kotae is not written on test machines).
  CommandRun kotae(const std::string& args, const std::string& env = "") {
    return run_command("env -u KOTAE_CONFIG HOME=" + root_.string() + " XDG_CONFIG_HOME=" + (root_ / "xdg").string() +
                           " " + env + " " + KOTAE_BINARY + " " + args + " --data " + (root_ / "data").string(),
                       root_ / "stderr.txt");
  }
  std::map<std::string, nlohmann::json> shown(const std::string& args, const std::string& env = "") {
    auto run = kotae("config show --json " + args, env);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::map<std::string, nlohmann::json> settings;
    std::istringstream in(run.out);
    for (std::string line; std::getline(in, line);) {
      auto row = nlohmann::json::parse(line);
      settings[row["setting"]] = row;
    }
    return settings;
  }
  void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

  fs::path root_;
};

TEST_F(ConfigTest, FlagsBeatTheEnvironmentWhichBeatsTheFile) {
  write(root_ / "xdg" / "kotae" / "config.toml",
        "log-level = \"warn\"\n[serve]\nport = 9100\nworkers = 8\nbatch-window-us = 500\n");
  auto s = shown("--port 9200", "KOTAE_WORKERS=12");
  EXPECT_EQ(s["serve.port"]["value"], "9200");
  EXPECT_EQ(s["serve.port"]["source"], "flag");
  EXPECT_EQ(s["serve.workers"]["value"], "12");
  EXPECT_EQ(s["serve.workers"]["source"], "env KOTAE_WORKERS");
  EXPECT_EQ(s["serve.batch-window-us"]["value"], "500");
  EXPECT_EQ(s["serve.batch-window-us"]["source"], "file " + (root_ / "xdg" / "kotae" / "config.toml").string());
  EXPECT_EQ(s["log-level"]["source"], s["serve.batch-window-us"]["source"]);
  EXPECT_EQ(s["serve.host"]["source"], "default");

  write(root_ / "other.toml", "[serve]\nport = 9300\n");  // --config replaces the user's file
  auto given = shown("--config " + (root_ / "other.toml").string());
  EXPECT_EQ(given["serve.port"]["value"], "9300");
  EXPECT_EQ(given["serve.workers"]["source"], "default");
}

TEST_F(ConfigTest, TheExampleListsEverySettingAndEachLineIsAccepted) {
  std::ifstream in(fs::path(KOTAE_SOURCE_DIR) / "docs" / "config.example.toml");
  ASSERT_TRUE(in);
  std::ostringstream uncommented;
  std::set<std::string> listed;
  std::string section;
  const std::regex setting(R"(^# ([a-z0-9-]+) = (.*)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.starts_with("[")) section = line.substr(1, line.size() - 2);
    if (std::regex_match(line, m, setting)) {
      const std::string key = m[1];
      listed.insert(section.empty() ? key : section + "." + key);
      const std::string value = m[2];
      if (value != "[]") uncommented << key << " = " << value << "\n";  // an empty list is the default already
    } else if (line.starts_with("[")) {
      uncommented << line << "\n";
    }
  }
  const auto defaults = shown("");
  for (const auto& [name, row] : defaults)
    EXPECT_TRUE(listed.contains(name)) << name << " is not in docs/config.example.toml";
  write(root_ / "all.toml", uncommented.str());
  auto from_file = shown("--config " + (root_ / "all.toml").string());
  EXPECT_EQ(from_file["serve.port"]["source"], "file " + (root_ / "all.toml").string());
  ASSERT_EQ(from_file.size(), defaults.size());
  // The example's values are the defaults: read back, each must mean what the default means.
  for (const auto& [name, row] : defaults) {
    if (name == "data") continue;  // the example shows "~/...", the default is this machine's path
    EXPECT_EQ(from_file[name]["value"], row["value"]) << name;
  }
}

TEST_F(ConfigTest, MistakesStopTheCommandWithAClearError) {
  write(root_ / "typo.toml", "[serve]\nprot = 9000\n");
  auto typo = kotae("config show --config " + (root_ / "typo.toml").string());
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("'serve.prot' is not a setting"), std::string::npos) << typo.err;
  write(root_ / "value.toml", "[serve]\nport = \"eighty\"\n");
  EXPECT_EQ(kotae("config show --config " + (root_ / "value.toml").string()).exit_code, 2);
  EXPECT_EQ(kotae("config show --config " + (root_ / "missing.toml").string()).exit_code, 2);

  auto model = kotae("serve --model a-typo");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("smollm2-135m-instruct"), std::string::npos) << "names what is installed: " << model.err;
  auto embedder = kotae("serve --embedder smollm2-135m-instruct");
  EXPECT_EQ(embedder.exit_code, 2);
  EXPECT_NE(embedder.err.find("a generator model, not an embedding one"), std::string::npos) << embedder.err;
  auto url = kotae("serve --backend openai --openai-url localhost:8080");
  EXPECT_EQ(url.exit_code, 2);
  EXPECT_NE(url.err.find("--openai-url"), std::string::npos) << url.err;
  EXPECT_EQ(kotae("serve --api-keys " + (root_ / "no-keys.json").string()).exit_code, 2);
  EXPECT_EQ(kotae("serve --queue http://not-redis --store postgres://x@/y").exit_code, 2);
}

}  // namespace
}  // namespace kotae::testing
