// The integrity gate (model/model_integrity.h) on a data directory of the test's own: each way a model
// can be damaged, misplaced or forged is refused by the gate, with a message that names the model, the
// file and the reason, before ONNX Runtime or llama.cpp could read it. The real int8 embedding model
// (copied, never touched in place) shows that a refusal comes from the gate and that a signed model
// still loads and embeds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "model/manifest_signature.h"
#include "model/model_integrity.h"
#include "model/onnx_session.h"
#include "model/sentence_encoder.h"
#include "support/test_data.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::read_text;

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

json file_entry(const fs::path& dir, const std::string& path, const std::string& role) {
  const std::string bytes = read_text(dir / path);
  return {{"path", path}, {"role", role}, {"size", bytes.size()}, {"sha256", sha256_hex(bytes)}};
}

class ModelIntegrityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-integrity");
    models_ = models_dir(root_);
    fs::create_directories(models_);
  }
  void TearDown() override {
    ::unsetenv("KOTAE_TRUSTED_KEYS");
    fs::remove_all(root_);
  }

  // A model of small made-up files: enough for every check the gate makes, never run.
  fs::path install_tiny(const std::string& name, const fs::path& where = {}) {
    const fs::path dir = (where.empty() ? models_ : where) / name;
    fs::create_directories(dir);
    write_text(dir / "weights.bin", "tiny weights, never run");
    write_text(dir / "tokenizer.json", "{}");
    write_manifest(
        dir, {{"format", 1},
              {"name", name},
              {"kind", "embedding"},
              {"files", {file_entry(dir, "weights.bin", "onnx"), file_entry(dir, "tokenizer.json", "tokenizer")}}});
    return dir;
  }

  // A copy of the installed int8 embedding model (the real one is never modified).
  fs::path install_real(const std::string& name) {
    const fs::path dir = models_ / name;
    fs::create_directories(dir);
    for (const char* file : {"manifest.json", "model.onnx", "tokenizer.json"}) {
      fs::copy_file(testing::model_dir("all-minilm-l6-v2-int8") / file, dir / file);
    }
    return dir;
  }

  static void write_manifest(const fs::path& dir, const json& manifest) {
    write_text(dir / "manifest.json", manifest.dump(2));
  }
  static json manifest_of(const fs::path& dir) { return json::parse(read_text(dir / "manifest.json")); }

  // Trusts `pair` through DATA/trusted_keys, as an administrator would.
  void trust(const KeyPair& pair) {
    fs::create_directories(trusted_keys_dir(root_));
    write_text(trusted_keys_dir(root_) / (pair.public_key.id + ".pub"), format_public_key(pair.public_key, "test"));
  }

  static void sign(const fs::path& dir, const KeyPair& pair) {
    auto text = sign_manifest(read_text(dir / "manifest.json"), pair.secret_key, "test");
    ASSERT_TRUE(text.ok()) << text.error().message;
    write_text(dir / "manifest.json", *text);
  }

  Result<VerifiedModel> verify(const std::string& name, IntegrityPolicy policy = {}) {
    return verify_model(models_, name, policy);
  }

  fs::path root_, models_;
};

void expect_refused(const Result<VerifiedModel>& result, ErrorCode code, const std::vector<std::string>& words) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, code) << result.error().message;
  for (const auto& word : words)
    EXPECT_NE(result.error().message.find(word), std::string::npos) << result.error().message;
}

TEST_F(ModelIntegrityTest, AnIntactModelPasses) {
  const auto dir = install_tiny("tiny");
  auto model = verify("tiny");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->dir, fs::canonical(dir));
  EXPECT_EQ(model->manifest.files.size(), 2u);
  EXPECT_EQ(model->signed_by, "");
}

// The real ONNX model with one byte changed: ONNX Runtime would probably still load it, so the refusal
// (a sha256 message from the gate, not an ONNX Runtime error) proves the gate ran first.
TEST_F(ModelIntegrityTest, ATamperedByteIsRefusedBySha256BeforeOnnxRuntimeReadsIt) {
  const auto dir = install_real("minilm");
  {
    std::fstream f(dir / "model.onnx", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(1000000);
    char c = 0;
    f.get(c);
    f.seekp(1000000);
    f.put(static_cast<char>(c ^ 0x01));
  }
  auto encoder = SentenceEncoder::load(dir);
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.error().code, ErrorCode::corrupt);
  const auto& message = encoder.error().message;
  EXPECT_EQ(message.rfind("model minilm refused: " + (dir / "model.onnx").string() + " has sha256 ", 0), 0u) << message;
  EXPECT_NE(message.find("manifest says afdb6f1a"), std::string::npos) << message;
  EXPECT_EQ(message.find("ONNX Runtime"), std::string::npos) << message;
}

TEST_F(ModelIntegrityTest, ATruncatedFileIsRefusedByItsSize) {
  const auto dir = install_real("minilm");
  fs::resize_file(dir / "model.onnx", 1000);
  auto encoder = SentenceEncoder::load(dir);
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.error().code, ErrorCode::corrupt);
  EXPECT_NE(encoder.error().message.find("model.onnx is truncated: 1000 bytes, manifest says 22972370 bytes"),
            std::string::npos)
      << encoder.error().message;
}

TEST_F(ModelIntegrityTest, AnOversizedFileIsRefusedByItsSize) {
  const auto dir = install_real("minilm");
  std::ofstream(dir / "tokenizer.json", std::ios::app | std::ios::binary) << "appended";
  auto encoder = SentenceEncoder::load(dir);
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.error().code, ErrorCode::corrupt);
  EXPECT_NE(encoder.error().message.find("tokenizer.json is oversized: 711669 bytes, manifest says 711661 bytes"),
            std::string::npos)
      << encoder.error().message;
}

TEST_F(ModelIntegrityTest, AFileOverTheSizeLimitIsRefusedWithoutBeingRead) {
  install_tiny("tiny");
  IntegrityPolicy small;
  small.max_file_bytes = 10;
  expect_refused(verify("tiny", small), ErrorCode::corrupt,
                 {"model tiny refused", "weights.bin", "over the limit of 10 bytes"});
  ::setenv("KOTAE_MAX_MODEL_BYTES", "10", 1);
  auto policy = integrity_policy(root_);
  ::unsetenv("KOTAE_MAX_MODEL_BYTES");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->max_file_bytes, 10u);
}

TEST_F(ModelIntegrityTest, AMissingFileIsNotFound) {
  const auto dir = install_tiny("tiny");
  fs::remove(dir / "tokenizer.json");
  expect_refused(verify("tiny"), ErrorCode::not_found, {"tokenizer.json is missing"});
  expect_refused(verify("absent"), ErrorCode::not_found, {"model absent refused", "not installed"});
}

// Every symlink is refused, even one with the right bytes behind it: its target lies outside what
// was checked and can be re-aimed after the check.
TEST_F(ModelIntegrityTest, ASymlinkedFileIsRefusedWhereverItPoints) {
  const auto dir = install_tiny("tiny");
  write_text(root_ / "outside.bin", read_text(dir / "weights.bin"));
  fs::remove(dir / "weights.bin");
  fs::create_symlink(root_ / "outside.bin", dir / "weights.bin");
  expect_refused(verify("tiny"), ErrorCode::corrupt,
                 {"model tiny refused", "weights.bin is a symlink to " + (root_ / "outside.bin").string()});

  fs::remove(dir / "weights.bin");
  fs::rename(root_ / "outside.bin", dir / "real.bin");
  fs::create_symlink("real.bin", dir / "weights.bin");  // inside the folder: still a symlink
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"weights.bin is a symlink to real.bin"});
}

TEST_F(ModelIntegrityTest, AFileBehindASymlinkedSubfolderIsRefused) {
  const auto dir = models_ / "nested";
  fs::create_directories(root_ / "elsewhere");
  write_text(root_ / "elsewhere" / "weights.bin", "w");
  fs::create_directories(dir);
  fs::create_directory_symlink(root_ / "elsewhere", dir / "onnx");
  write_manifest(dir,
                 {{"name", "nested"}, {"kind", "embedding"}, {"files", {file_entry(dir, "onnx/weights.bin", "onnx")}}});
  expect_refused(verify("nested"), ErrorCode::corrupt, {"onnx/weights.bin lies behind a symlink (onnx)"});
}

TEST_F(ModelIntegrityTest, AModelFolderOutsideTheModelsDirectoryIsRefused) {
  install_tiny("elsewhere", root_ / "outside");
  fs::create_directory_symlink(root_ / "outside" / "elsewhere", models_ / "linked");
  expect_refused(verify("linked"), ErrorCode::corrupt, {"model linked refused", "outside the models directory"});
  // Through a loader given the folder, too.
  auto encoder = SentenceEncoder::load(models_ / "linked");
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.error().message.find("outside the models directory"), std::string::npos) << encoder.error().message;

  // A models directory that is itself a symlink is the user's choice, and fine.
  install_tiny("tiny");
  fs::create_directories(root_ / "other-data");
  fs::create_directory_symlink(models_, root_ / "other-data" / "models");
  EXPECT_TRUE(verify_model(root_ / "other-data" / "models", "tiny", {}).ok());
}

TEST_F(ModelIntegrityTest, ANameThatClimbsOutIsRefused) {
  install_tiny("elsewhere", root_);
  for (const std::string& name : std::vector<std::string>{"../elsewhere", "..", ".", "a/b", ""}) {
    expect_refused(verify(name), ErrorCode::invalid_argument, {"is not a model name"});
  }
  auto encoder = SentenceEncoder::load(models_ / ".." / "elsewhere");
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(encoder.error().message.find("'..'"), std::string::npos) << encoder.error().message;
}

TEST_F(ModelIntegrityTest, APathEscapeInTheManifestIsRefused) {
  const auto dir = install_tiny("tiny");
  write_text(models_ / "secret.bin", "secret");
  for (const std::string& escape :
       std::vector<std::string>{"../secret.bin", (models_ / "secret.bin").string(), "x/../../secret.bin"}) {
    auto manifest = manifest_of(dir);
    manifest["files"][0]["path"] = escape;
    write_manifest(dir, manifest);
    expect_refused(verify("tiny"), ErrorCode::corrupt, {"model tiny refused", "leaves the model folder"});
  }
}

TEST_F(ModelIntegrityTest, AManifestWithoutFileSizesIsRefused) {
  const auto dir = install_tiny("tiny");
  auto manifest = manifest_of(dir);
  manifest["files"][0].erase("size");
  write_manifest(dir, manifest);
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"model tiny refused", "size"});
}

// Operator libraries never come from a model folder: not by name, not by role, not under another name.
TEST_F(ModelIntegrityTest, SharedLibrariesAreRefusedByNameRoleAndContent) {
  const auto dir = install_tiny("tiny");
  const json intact = manifest_of(dir);

  write_text(dir / "libcustom_ops.so",
             "\x7f"
             "ELF rest of a library");
  auto manifest = intact;
  manifest["files"].push_back(file_entry(dir, "libcustom_ops.so", "onnx-data"));
  write_manifest(dir, manifest);
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"libcustom_ops.so is a shared library", "never loads"});
  fs::remove(dir / "libcustom_ops.so");

  write_text(dir / "ops.bin", "not a library by its bytes");
  manifest = intact;
  manifest["files"].push_back(file_entry(dir, "ops.bin", "custom-ops"));
  write_manifest(dir, manifest);
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"ops.bin is a shared library (role 'custom-ops')"});

  write_text(dir / "ops.bin", std::string("\x7f"
                                          "ELF\x02\x01\x01",
                                          7) +
                                  std::string(100, '\0'));
  manifest = intact;
  manifest["files"].push_back(file_entry(dir, "ops.bin", "onnx-data"));
  write_manifest(dir, manifest);
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"ops.bin is an ELF binary"});

  std::string pe(256, '\0');
  pe[0] = 'M', pe[1] = 'Z', pe[0x3c] = static_cast<char>(0x80);
  pe.replace(0x80, 4, std::string("PE\0\0", 4));
  write_text(dir / "ops.bin", pe);
  manifest = intact;
  manifest["files"].push_back(file_entry(dir, "ops.bin", "onnx-data"));
  write_manifest(dir, manifest);
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"ops.bin is a Windows PE binary"});
}

// ONNX Runtime finds external data by name in the model's folder: an unlisted file would be read
// unverified, so the folder may hold only what the manifest lists.
TEST_F(ModelIntegrityTest, AFileTheManifestDoesNotListIsRefused) {
  const auto dir = install_tiny("tiny");
  write_text(dir / "model.onnx_data", "external weights nobody vouched for");
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"model.onnx_data is not listed in the manifest"});
  fs::remove(dir / "model.onnx_data");
  write_text(dir / "libevil.so",
             "\x7f"
             "ELF");
  expect_refused(verify("tiny"), ErrorCode::corrupt, {"libevil.so is not listed in the manifest"});
}

TEST_F(ModelIntegrityTest, AnUnsignedManifestIsRefusedOnceAKeyIsTrusted) {
  install_tiny("tiny");
  const KeyPair key = generate_key_pair();
  trust(key);
  auto policy = integrity_policy(root_);
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  ASSERT_EQ(policy->trusted_keys.size(), 1u);
  EXPECT_EQ(policy->trusted_keys[0].id, key.public_key.id);
  expect_refused(verify("tiny", *policy), ErrorCode::corrupt, {"model tiny refused", "carries no signature"});
  // The loaders find the data directory's keys themselves.
  auto encoder = SentenceEncoder::load(models_ / "tiny");
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.error().message.find("carries no signature"), std::string::npos) << encoder.error().message;
}

TEST_F(ModelIntegrityTest, ASignatureByAnUntrustedKeyIsRefused) {
  const auto dir = install_tiny("tiny");
  const KeyPair trusted = generate_key_pair(), stranger = generate_key_pair();
  trust(trusted);
  sign(dir, stranger);
  auto policy = integrity_policy(root_);
  ASSERT_TRUE(policy.ok());
  expect_refused(verify("tiny", *policy), ErrorCode::corrupt,
                 {"signed only by keys this machine does not trust", stranger.public_key.id});
  // A signature that claims the trusted key's id but was made by another key does not pass either.
  auto manifest = manifest_of(dir);
  manifest["signatures"][0]["key_id"] = trusted.public_key.id;
  write_manifest(dir, manifest);
  expect_refused(verify("tiny", *policy), ErrorCode::corrupt, {"does not match the manifest"});
}

TEST_F(ModelIntegrityTest, AManifestEditedAfterSigningIsRefused) {
  const auto dir = install_tiny("tiny");
  const KeyPair key = generate_key_pair();
  trust(key);
  sign(dir, key);
  auto policy = integrity_policy(root_);
  ASSERT_TRUE(policy.ok());
  ASSERT_TRUE(verify("tiny", *policy).ok());
  // Re-indenting keeps the signature: it covers the JSON's content, not its layout.
  write_manifest(dir, manifest_of(dir));
  ASSERT_TRUE(verify("tiny", *policy).ok());
  // A new file and its checksum, written into the signed manifest by someone without the key.
  write_text(dir / "weights.bin", "replaced weights");
  auto manifest = manifest_of(dir);
  manifest["files"][0] = file_entry(dir, "weights.bin", "onnx");
  write_manifest(dir, manifest);
  expect_refused(verify("tiny", *policy), ErrorCode::corrupt,
                 {"model tiny refused", "does not match the manifest", "edited after signing"});
}

TEST_F(ModelIntegrityTest, AValidSignatureLoadsAndEmbeds) {
  const auto dir = install_real("minilm");
  const KeyPair key = generate_key_pair(), other = generate_key_pair();
  sign(dir, other);  // a second, untrusted signature does not get in the way
  sign(dir, key);
  fs::create_directories(root_ / "keys");
  write_text(root_ / "keys" / "k.pub", format_public_key(key.public_key, "release"));
  ::setenv("KOTAE_TRUSTED_KEYS", (root_ / "keys").c_str(), 1);  // trusted through the environment this time
  auto policy = integrity_policy(root_);
  ASSERT_TRUE(policy.ok());
  auto model = verify("minilm", *policy);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->signed_by, key.public_key.id);

  EncoderOptions options;
  options.warm_up = false;
  auto encoder = SentenceEncoder::load(dir, options);
  ASSERT_TRUE(encoder.ok()) << encoder.error().message;
  const std::vector<std::string> texts = {"signed models still embed"};
  auto vectors = (*encoder)->embed(texts, TextRole::passage);
  ASSERT_TRUE(vectors.ok());
  ASSERT_EQ(vectors->dimension, 384u);
  double norm = 0;
  for (const float v : vectors->values) norm += double(v) * v;
  EXPECT_NEAR(norm, 1.0, 1e-4);
}

TEST_F(ModelIntegrityTest, AnUnreadableTrustedKeyFileIsAnErrorNotAnOpenDoor) {
  install_tiny("tiny");
  fs::create_directories(trusted_keys_dir(root_));
  write_text(trusted_keys_dir(root_) / "typo.pub", "kotae-ed25519-public not-hex");
  auto policy = integrity_policy(root_);
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.error().message.find("typo.pub"), std::string::npos) << policy.error().message;
  auto encoder = SentenceEncoder::load(models_ / "tiny");
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.error().message.find("typo.pub"), std::string::npos) << encoder.error().message;
}

// What the CUDA encoder asks before it dlopens its plugin: is it inside the models directory?
TEST_F(ModelIntegrityTest, IsInsideResolvesSymlinksAndDotDot) {
  install_tiny("tiny");
  EXPECT_TRUE(is_inside(models_ / "tiny" / "libkotae_cuda_encoder.so", models_));
  EXPECT_TRUE(is_inside(models_ / "x" / ".." / "tiny", models_));
  EXPECT_FALSE(is_inside(models_ / ".." / "libkotae_cuda_encoder.so", models_));
  EXPECT_FALSE(is_inside(root_ / "models-other" / "a.so", models_));  // a prefix of the name is not a parent
  fs::create_directory_symlink(models_, root_ / "linked");
  EXPECT_TRUE(is_inside(root_ / "linked" / "tiny" / "a.so", models_));
}

TEST(ModelKeys, KeysRoundTripThroughTheirFiles) {
  const auto dir = testing::fresh_temp_dir("kotae-keys");
  const KeyPair pair = generate_key_pair();
  ASSERT_TRUE(write_key_pair(pair, dir / "release", "release key").ok());
  EXPECT_EQ(fs::status(dir / "release.key").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto secret = read_secret_key(dir / "release.key");
  ASSERT_TRUE(secret.ok()) << secret.error().message;
  EXPECT_EQ(secret->bytes, pair.secret_key.bytes);
  auto pub = read_public_keys(dir / "release.pub");
  ASSERT_TRUE(pub.ok());
  ASSERT_EQ(pub->size(), 1u);
  EXPECT_EQ((*pub)[0].id, pair.public_key.id);
  EXPECT_EQ((*pub)[0].bytes, pair.public_key.bytes);
  EXPECT_EQ(pair.public_key.id.size(), 16u);
  EXPECT_EQ(write_key_pair(generate_key_pair(), dir / "release", "").error().code, ErrorCode::already_exists);
  // A damaged secret key (a flipped digit) is caught when read, not when it signs garbage.
  std::string text = read_text(dir / "release.key");
  text[30] = text[30] == '0' ? '1' : '0';
  EXPECT_FALSE(parse_secret_key(text, "damaged").ok());
  fs::remove_all(dir);
}

// --- ONNX graphs that need operators ONNX Runtime does not have -----------------------------------

// Protocol buffer wire format, just enough to write a one-node ONNX model by hand.
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string field(int number, std::uint64_t value) {
  return varint(std::uint64_t(number) << 3) + varint(value);
}
std::string field(int number, const std::string& bytes) {
  return varint((std::uint64_t(number) << 3) | 2) + varint(bytes.size()) + bytes;
}

std::string float_vector_info(const std::string& name) {
  const std::string shape = field(1, field(1, std::uint64_t{1}));           // TensorShapeProto.dim { dim_value: 1 }
  const std::string tensor = field(1, std::uint64_t{1}) + field(2, shape);  // elem_type FLOAT, shape
  return field(1, name) + field(2, field(1, tensor));                       // ValueInfoProto { name, type.tensor_type }
}

// x -> com.example.evil:EvilOp -> y, importing the custom domain as a model using a custom-op library would.
std::string custom_op_model() {
  const std::string node = field(1, std::string("x")) + field(2, std::string("y")) + field(3, std::string("evil")) +
                           field(4, std::string("EvilOp")) + field(7, std::string("com.example.evil"));
  const std::string graph = field(1, node) + field(2, std::string("g")) + field(11, float_vector_info("x")) +
                            field(12, float_vector_info("y"));
  return field(1, std::uint64_t{8}) + field(8, field(1, std::string("")) + field(2, std::uint64_t{17})) +
         field(8, field(1, std::string("com.example.evil")) + field(2, std::uint64_t{1})) + field(7, graph);
}

// The shared objects this process has mapped.
std::string mapped_libraries() {
  std::istringstream maps(read_text("/proc/self/maps"));
  std::string libraries;
  for (std::string line; std::getline(maps, line);) {
    if (line.find(".so") != std::string::npos) libraries += line + "\n";
  }
  return libraries;
}

TEST_F(ModelIntegrityTest, AGraphWithACustomOperatorIsRefusedAndNothingIsLoadedForIt) {
  const auto dir = models_ / "custom";
  fs::create_directories(dir);
  write_text(dir / "model.onnx", custom_op_model());
  fs::copy_file(testing::model_dir("all-minilm-l6-v2-int8") / "tokenizer.json", dir / "tokenizer.json");
  write_manifest(dir,
                 {{"name", "custom"},
                  {"kind", "embedding"},
                  {"pooling", "mean"},
                  {"dimension", 1},
                  {"max_length", 8},
                  {"output", "y"},
                  {"files", {file_entry(dir, "model.onnx", "onnx"), file_entry(dir, "tokenizer.json", "tokenizer")}}});
  ASSERT_TRUE(verify("custom").ok());  // intact: this refusal is ONNX Runtime's, made clear

  auto session = OnnxSession::open(dir / "model.onnx", {});
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code, ErrorCode::model);
  EXPECT_NE(session.error().message.find("never loads custom-operator libraries"), std::string::npos)
      << session.error().message;
  EXPECT_NE(session.error().message.find("EvilOp"), std::string::npos) << session.error().message;

  auto encoder = SentenceEncoder::load(dir);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.error().message.find("never loads custom-operator libraries"), std::string::npos)
      << encoder.error().message;
  const std::string libraries = mapped_libraries();
  EXPECT_EQ(libraries.find(root_.string()), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("evil"), std::string::npos) << libraries;
}

}  // namespace
}  // namespace kotae
