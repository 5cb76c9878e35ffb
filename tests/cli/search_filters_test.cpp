// `kotae search` and `kotae ask` with --where (a metadata filter) and --document (chosen documents), as a
// user runs them: the real binary, e-mails indexed by `kotae index` (their headers are their metadata),
// JSON read back; a filter that does not parse or names what no document has is exit code 2 with the
// reason on stderr.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "support/command_runner.h"
#include "support/test_data.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;

class CliSearchFiltersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-cli-filters");
    fs::create_directories(root_ / "data");
    fs::create_directory_symlink(models_dir(default_data_dir()), root_ / "data" / "models");
    mail("alice-2024.eml", "Alice Martin <alice@example.com>", "Policy", "Fri, 01 Mar 2024 10:00:00 +0100",
         "The annual leave policy grants twenty-five days of paid leave per year.\n\n"
         "Unused leave days may be carried over until the end of March.");
    mail("carol-2023.eml", "Carol Diaz <carol@example.com>", "Requests", "Mon, 20 Nov 2023 09:30:00 +0000",
         "Leave requests go to your manager two weeks before the first day of leave.\n\n"
         "Sick leave is reported on the first morning of absence.");
    std::ofstream(root_ / "docs" / "note.md") << "# Leave\n\nA note about leave without metadata of its own.\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  void mail(const std::string& name, const std::string& from, const std::string& subject, const std::string& date,
            const std::string& body) {
    fs::create_directories(root_ / "docs");
    std::ofstream(root_ / "docs" / name) << "From: " << from << "\nTo: Team <team@example.com>\nSubject: " << subject
                                         << "\nDate: " << date << "\nContent-Type: text/plain\n\n"
                                         << body << "\n";
  }

  testing::CommandRun kotae(const std::string& args) {
    return testing::run_command(std::string(KOTAE_BINARY) + " " + args + " --data " + (root_ / "data").string(),
                                root_ / "stderr.txt");
  }

  // The file names of the documents a `search --json` found.
  std::set<std::string> searched(const std::string& flags) {
    auto run = kotae("search 'leave days' --collection mail --mode bm25 -k 50 --json " + flags);
    EXPECT_EQ(run.exit_code, 0) << flags << ": " << run.err;
    std::set<std::string> names;
    if (run.exit_code != 0) return names;
    const auto result = nlohmann::json::parse(run.out);
    for (const auto& hit : result["hits"]) {
      names.insert(fs::path(hit["document"].get<std::string>()).filename().string());
      ids_[fs::path(hit["document"].get<std::string>()).filename().string()] = hit["document_id"].get<std::int64_t>();
    }
    return names;
  }

  fs::path root_;
  std::map<std::string, std::int64_t> ids_;
};

TEST_F(CliSearchFiltersTest, WhereAndDocumentRestrictSearchAndAsk) {
  auto indexed = kotae("index " + (root_ / "docs").string() + " --collection mail --chunk-tokens 24 --overlap 4");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  const std::set<std::string> all = {"alice-2024.eml", "carol-2023.eml", "note.md"};
  ASSERT_EQ(searched(""), all);

  EXPECT_EQ(searched("--where 'date >= 2024-01-01'"), std::set<std::string>{"alice-2024.eml"});
  EXPECT_EQ(searched("--where 'subject = \"Requests\" or not date >= 2000-01-01'"),
            (std::set<std::string>{"carol-2023.eml", "note.md"}));
  const std::string carol = std::to_string(ids_["carol-2023.eml"]);
  const std::string note = std::to_string(ids_["note.md"]);
  EXPECT_EQ(searched("--document " + carol), std::set<std::string>{"carol-2023.eml"});
  EXPECT_EQ(searched("--document " + carol + " --document " + note),
            (std::set<std::string>{"carol-2023.eml", "note.md"}));
  EXPECT_EQ(searched("--document " + carol + " --document " + note + " --where 'date < 2024-01-01'"),
            std::set<std::string>{"carol-2023.eml"});
  EXPECT_EQ(searched("--document 99999999"), std::set<std::string>{});

  // Plain output too.
  auto plain = kotae("search 'leave' --collection mail --mode bm25 --where 'date >= 2024-01-01'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("alice-2024.eml"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("carol-2023.eml"), std::string::npos) << plain.out;

  // ask: the extractive back-end's sources come from the allowed documents only.
  auto asked = kotae(
      "ask 'Who do leave requests go to?' --collection mail --backend extractive --json --where 'date < 2024-01-01'");
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  const auto answer = nlohmann::json::parse(asked.out);
  ASSERT_FALSE(answer["sources"].empty()) << asked.out;
  for (const auto& source : answer["sources"]) {
    EXPECT_EQ(fs::path(source["document"].get<std::string>()).filename(), "carol-2023.eml");
  }
}

TEST_F(CliSearchFiltersTest, BadFiltersAreUsageErrorsSayingWhy) {
  ASSERT_EQ(kotae("index " + (root_ / "docs").string() + " --collection mail").exit_code, 0);
  auto syntax = kotae("search 'leave' --collection mail --where 'date >= '");
  EXPECT_EQ(syntax.exit_code, 2);
  EXPECT_NE(syntax.err.find("--where: column 9: expected a value"), std::string::npos) << syntax.err;
  auto unknown = kotae("search 'leave' --collection mail --where 'colour = \"red\"'");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--where: no document of this collection has the field 'colour'"), std::string::npos)
      << unknown.err;
  auto type = kotae("ask 'leave?' --collection mail --backend extractive --where 'date > 5'");
  EXPECT_EQ(type.exit_code, 2);
  EXPECT_NE(type.err.find("--where: 'date' holds dates: '>' on it needs a date, not 5"), std::string::npos) << type.err;
  auto negative = kotae("search 'leave' --collection mail --document -3");
  EXPECT_NE(negative.exit_code, 0);
}

}  // namespace
}  // namespace kotae
