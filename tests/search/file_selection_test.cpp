#include "rag/file_selection.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_data.h"

namespace kotae::rag {
namespace {

namespace fs = std::filesystem;

class FileSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-select");
    for (const char* f : {"a.md", "b.txt", "guide/c.html", "guide/deep/d.pdf", "guide/e.docx", "notes.bin",
                          ".hidden/f.md", "guide/.g.md", "UPPER.MD"}) {
      fs::create_directories((root_ / f).parent_path());
      std::ofstream(root_ / f) << "x";
    }
  }
  void TearDown() override { fs::remove_all(root_); }
  std::vector<std::string> relative(const std::vector<fs::path>& files) const {
    std::vector<std::string> out;
    for (const auto& f : files) out.push_back(f.lexically_relative(root_).generic_string());
    return out;
  }
  fs::path root_;
};

TEST_F(FileSelectionTest, TakesSupportedFilesSkipsHiddenAndSorts) {
  const std::vector<fs::path> paths{root_};
  auto files = select_files(paths, {});
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(relative(*files), (std::vector<std::string>{"UPPER.MD", "a.md", "b.txt", "guide/c.html", "guide/deep/d.pdf",
                                                        "guide/e.docx"}));
}

TEST_F(FileSelectionTest, IncludeAndExcludeGlobsByNameOrPath) {
  const std::vector<fs::path> paths{root_};
  auto md = select_files(paths, {{"*.md", "*.html"}, {}});
  ASSERT_TRUE(md);
  EXPECT_EQ(relative(*md), (std::vector<std::string>{"a.md", "guide/c.html"}));
  auto guide = select_files(paths, {{"guide/*"}, {"*.pdf"}});
  ASSERT_TRUE(guide);
  EXPECT_EQ(relative(*guide), (std::vector<std::string>{"guide/c.html", "guide/e.docx"}));
}

TEST_F(FileSelectionTest, NamedFilesAndErrors) {
  const std::vector<fs::path> both{root_ / "a.md", root_ / "a.md", root_ / "b.txt"};
  auto files = select_files(both, {});
  ASSERT_TRUE(files);
  EXPECT_EQ(files->size(), 2u);
  const std::vector<fs::path> missing{root_ / "nope"};
  auto error = select_files(missing, {});
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().code, ErrorCode::not_found);
  const std::vector<fs::path> unsupported{root_ / "notes.bin"};
  auto refused = select_files(unsupported, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::unsupported);
}

}  // namespace
}  // namespace kotae::rag
