#include <gtest/gtest.h>

#include <fstream>

#include "core/sha256.h"
#include "support/test_data.h"

namespace kotae {
namespace {

TEST(Sha256, MatchesKnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string raw = sha256_bytes("abc");
  ASSERT_EQ(raw.size(), 32u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0xba);
  EXPECT_EQ(static_cast<unsigned char>(raw[31]), 0xad);
}

TEST(Sha256, FileDigestEqualsBytesDigestAcrossBufferBoundaries) {
  const auto dir = testing::fresh_temp_dir("kotae-sha");
  std::string bytes((1 << 20) + 4097, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  std::ofstream(dir / "blob", std::ios::binary) << bytes;
  auto digest = sha256_file(dir / "blob");
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(*digest, sha256_hex(bytes));
  std::filesystem::remove_all(dir);
}

TEST(Sha256, MissingFileIsNotFound) {
  auto digest = sha256_file("/nonexistent/kotae/file");
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.error().code, ErrorCode::not_found);
}

}  // namespace
}  // namespace kotae
