// `kotae model keygen | sign | verify | add`, run as a user runs them, on a data folder of the test's
// own: a key pair, a signature, and what verify says before and after the model is trusted, signed
// and damaged.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "support/command_runner.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::read_text;

class ModelCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-model-command");
    data_ = root_ / "data";
    // A small made-up embedding model: verify checks files, it does not run them.
    const fs::path dir = models_dir(data_) / "tiny";
    fs::create_directories(dir);
    std::ofstream(dir / "model.onnx", std::ios::binary) << "tiny weights";
    std::ofstream(dir / "tokenizer.json", std::ios::binary) << "{}";
    json files = json::array();
    for (const char* f : {"model.onnx", "tokenizer.json"}) {
      const std::string bytes = read_text(dir / f);
      files.push_back({{"path", f},
                       {"role", f == std::string("model.onnx") ? "onnx" : "tokenizer"},
                       {"size", bytes.size()},
                       {"sha256", sha256_hex(bytes)}});
    }
    std::ofstream(dir / "manifest.json") << json{{"name", "tiny"}, {"kind", "embedding"}, {"files", files}}.dump(2);
  }
  void TearDown() override { fs::remove_all(root_); }

  testing::CommandRun kotae(const std::string& args) {
    return testing::run_command(std::string(KOTAE_BINARY) + " " + args + " --data " + data_.string(),
                                root_ / "stderr.txt");
  }
  json verify_json(const std::string& name, int expected_exit) {
    const auto run = kotae("model verify " + name + " --json");
    EXPECT_EQ(run.exit_code, expected_exit) << run.out << run.err;
    return run.exit_code == expected_exit ? json::parse(run.out) : json();
  }

  fs::path root_, data_;
};

TEST_F(ModelCommandTest, KeygenSignVerifyRoundTrip) {
  // Unsigned and no key trusted: intact is enough.
  auto report = verify_json("tiny", 0);
  EXPECT_TRUE(report["ok"].get<bool>());
  EXPECT_FALSE(report["signatures_required"].get<bool>());

  const auto keygen = kotae("model keygen --out " + (root_ / "release").string());
  ASSERT_EQ(keygen.exit_code, 0) << keygen.err;
  EXPECT_EQ(fs::status(root_ / "release.key").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const std::string pub = read_text(root_ / "release.pub");
  ASSERT_EQ(pub.rfind("kotae-ed25519-public ", 0), 0u) << pub;
  const auto again = kotae("model keygen --out " + (root_ / "release").string());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("never overwritten"), std::string::npos) << again.err;
  EXPECT_EQ(read_text(root_ / "release.pub"), pub);

  // Trusting the key makes the unsigned model fail.
  fs::create_directories(data_ / "trusted_keys");
  fs::copy_file(root_ / "release.pub", data_ / "trusted_keys" / "release.pub");
  const auto unsigned_run = kotae("model verify tiny");
  EXPECT_EQ(unsigned_run.exit_code, 1);
  EXPECT_NE(unsigned_run.out.find("carries no signature"), std::string::npos) << unsigned_run.out;
  EXPECT_NE(unsigned_run.out.find("refused"), std::string::npos) << unsigned_run.out;

  const auto sign = kotae("model sign tiny --key " + (root_ / "release.key").string());
  ASSERT_EQ(sign.exit_code, 0) << sign.out << sign.err;
  report = verify_json("tiny", 0);
  EXPECT_TRUE(report["signatures_required"].get<bool>());
  const std::string key_id = report["signed_by"].get<std::string>();
  EXPECT_EQ(key_id.size(), 16u);
  EXPECT_EQ(report["signers"], json::array({key_id}));
  const auto text = kotae("model verify tiny");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("valid, by trusted key " + key_id), std::string::npos) << text.out;
  // Signing again replaces the key's signature rather than piling up copies.
  ASSERT_EQ(kotae("model sign tiny --key " + (root_ / "release.key").string()).exit_code, 0);
  EXPECT_EQ(json::parse(read_text(models_dir(data_) / "tiny" / "manifest.json"))["signatures"].size(), 1u);

  // A damaged file: refused, and the report says which and why.
  std::ofstream(models_dir(data_) / "tiny" / "model.onnx", std::ios::binary) << "tiny weightz";
  report = verify_json("tiny", 1);
  EXPECT_EQ(report["status"], "corrupt");
  EXPECT_EQ(report["files"][0]["path"], "model.onnx");
  EXPECT_EQ(report["files"][0]["status"], "corrupt");
  EXPECT_NE(report["files"][0]["problem"].get<std::string>().find("manifest says"), std::string::npos) << report.dump();
  EXPECT_EQ(report["files"][1]["status"], "ok");
  // ... and a damaged model is not signed.
  const auto sign_damaged = kotae("model sign tiny --key " + (root_ / "release.key").string());
  EXPECT_EQ(sign_damaged.exit_code, 1);
  EXPECT_NE(sign_damaged.err.find("does not verify"), std::string::npos) << sign_damaged.err;
}

TEST_F(ModelCommandTest, VerifyRefusesNamesOutsideTheModelsDirectory) {
  const auto climb = kotae("model verify ../models/tiny");
  EXPECT_EQ(climb.exit_code, 1);
  EXPECT_NE(climb.out.find("is not a model name"), std::string::npos) << climb.out;
  const auto absent = verify_json("absent", 1);
  EXPECT_EQ(absent["status"], "missing");
}

// The server takes trusted keys by flag (or KOTAE_TRUSTED_KEYS, or its TOML file): an unreadable key
// file stops it at once, and an unsigned embedder is refused before it is read.
TEST_F(ModelCommandTest, ServeRequiresSignaturesFromItsTrustedKeys) {
  std::ofstream(root_ / "typo.pub") << "not a key";
  const auto bad_key = kotae("serve --port 0 --trusted-keys " + (root_ / "typo.pub").string());
  EXPECT_NE(bad_key.exit_code, 0);
  EXPECT_NE(bad_key.err.find("typo.pub"), std::string::npos) << bad_key.err;

  ASSERT_EQ(kotae("model keygen --out " + (root_ / "release").string()).exit_code, 0);
  const auto unsigned_model =
      kotae("serve --port 0 --embedder tiny --trusted-keys " + (root_ / "release.pub").string());
  EXPECT_NE(unsigned_model.exit_code, 0);
  EXPECT_NE(unsigned_model.err.find("\"signatures_required\":true"), std::string::npos) << unsigned_model.err;
  EXPECT_NE(unsigned_model.err.find("model tiny refused"), std::string::npos) << unsigned_model.err;
  EXPECT_NE(unsigned_model.err.find("carries no signature"), std::string::npos) << unsigned_model.err;
}

TEST_F(ModelCommandTest, AddInstallsAGgufThatThenVerifies) {
  ASSERT_TRUE(testing::write_tiny_llama_gguf(root_ / "chat.gguf", {.with_tokenizer = true}));
  const auto add = kotae("model add " + (root_ / "chat.gguf").string() + " --name chat");
  ASSERT_EQ(add.exit_code, 0) << add.err;
  const auto report = verify_json("chat", 0);
  EXPECT_EQ(report["files"][0]["path"], "model.gguf");
  const auto manifest = json::parse(read_text(models_dir(data_) / "chat" / "manifest.json"));
  EXPECT_EQ(manifest["kind"], "generator");
  EXPECT_EQ(manifest["files"][0]["sha256"], sha256_hex(read_text(root_ / "chat.gguf")));
  EXPECT_EQ(kotae("model add " + (root_ / "chat.gguf").string() + " --name chat").exit_code, 2);  // taken
  std::ofstream(root_ / "not.gguf") << "plain text";
  const auto not_gguf = kotae("model add " + (root_ / "not.gguf").string() + " --name other");
  EXPECT_EQ(not_gguf.exit_code, 2);
  EXPECT_NE(not_gguf.err.find("not a GGUF file"), std::string::npos) << not_gguf.err;
  EXPECT_FALSE(fs::exists(models_dir(data_) / "other"));
}

}  // namespace
}  // namespace kotae
