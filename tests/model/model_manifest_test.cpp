#include <gtest/gtest.h>

#include <fstream>

#include "core/sha256.h"
#include "model/model_manifest.h"
#include "support/test_data.h"

namespace kotae {
namespace {

std::string manifest_json(const std::string& path, const std::string& sha) {
  return R"({"name": "m", "kind": "embedding", "files": [{"path": ")" + path +
         R"(", "role": "onnx", "size": 7, "sha256": ")" + sha + R"("}]})";
}

TEST(ModelManifest, ParsesTheInstalledDefaultModel) {
  auto m = load_model_manifest(testing::model_dir("all-minilm-l6-v2"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->kind, "embedding");
  EXPECT_EQ(m->dimension, 384);
  EXPECT_EQ(m->pooling, "mean");
  ASSERT_NE(m->file_with_role("onnx"), nullptr);
  ASSERT_NE(m->file_with_role("tokenizer"), nullptr);
}

TEST(ModelManifest, RejectsPathsThatLeaveTheModelFolder) {
  const std::string sha(64, 'a');
  for (const std::string bad : {"../escape.onnx", "/etc/passwd", "a/../../b"}) {
    auto m = parse_model_manifest(manifest_json(bad, sha), "test");
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.error().code, ErrorCode::corrupt);
  }
  EXPECT_FALSE(parse_model_manifest(manifest_json("model.onnx", "short"), "test").ok());
  EXPECT_FALSE(parse_model_manifest("{not json", "test").ok());
  EXPECT_FALSE(parse_model_manifest(R"({"name": "m"})", "test").ok());
}

// nlohmann's get<int>() casts an out-of-range float with undefined behaviour (found by fuzz/manifest,
// input in fuzz/regressions/manifest): sizes and counts must be integers in range.
TEST(ModelManifest, RejectsSizesAndCountsThatAreNotIntegersInRange) {
  const std::string good = manifest_json("model.onnx", std::string(64, 'a'));
  ASSERT_TRUE(parse_model_manifest(good, "test").ok());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return parse_model_manifest(text, "test");
  };
  for (const std::string size : {"9e132", "7.5", "-7", "\"7\""}) {
    auto m = with(R"("size": 7)", R"("size": )" + size);
    ASSERT_FALSE(m.ok()) << size;
    EXPECT_EQ(m.error().code, ErrorCode::corrupt);
  }
  for (const std::string count : {"1e100", "3000000000", "-1", "384.0"}) {
    EXPECT_FALSE(with(R"("kind": "embedding")", R"("kind": "embedding", "dimension": )" + count).ok()) << count;
  }
  auto m = with(R"("kind": "embedding")", R"("kind": "embedding", "dimension": 384, "max_length": 256)");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->dimension, 384);
  EXPECT_EQ(m->max_length, 256);
  EXPECT_EQ(m->files.front().size, 7u);
}

TEST(ModelManifest, VerificationTellsOkMissingAndCorruptApart) {
  const auto dir = testing::fresh_temp_dir("kotae-manifest");
  std::ofstream(dir / "model.onnx") << "weights";
  auto good = parse_model_manifest(manifest_json("model.onnx", sha256_hex("weights")), "test");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(verify_model_files(dir, *good).front().status, FileStatus::ok);

  std::ofstream(dir / "model.onnx") << "tampered";
  const auto corrupt = verify_model_files(dir, *good).front();
  EXPECT_EQ(corrupt.status, FileStatus::corrupt);
  EXPECT_EQ(corrupt.actual_sha256, sha256_hex("tampered"));

  std::filesystem::remove(dir / "model.onnx");
  EXPECT_EQ(verify_model_files(dir, *good).front().status, FileStatus::missing);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kotae
