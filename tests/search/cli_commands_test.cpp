// `kotae index`, `search`, `remove` and `eval` as a user runs them: the real binary, a data directory
// of its own (models linked from the one scripts/setup filled), JSON read back.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/command_runner.h"
#include "support/test_data.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;

using testing::CommandRun;

class CliCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-cli");
    fs::create_directories(root_ / "data");
    fs::create_directory_symlink(models_dir(default_data_dir()), root_ / "data" / "models");
    write("docs/bread.md", "# Bread\n\nKnead the dough for ten minutes, then let it rise until doubled.\n");
    write("docs/rockets.txt", "Liquid oxygen and kerosene power the first stage of the rocket.\n");
    write("docs/notes/ignored.md", "# Draft\n\nThis draft mentions dough too.\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }

  CommandRun kotae(const std::string& args) {
    return testing::run_command(std::string(KOTAE_BINARY) + " " + args + " --data " + (root_ / "data").string(),
                                root_ / "stderr.txt");
  }

  static std::vector<nlohmann::json> json_lines(const std::string& out) {
    std::vector<nlohmann::json> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  fs::path root_;
};

TEST_F(CliCommandsTest, IndexSearchRemove) {
  const std::string docs = (root_ / "docs").string();
  // Not the default embedder, and one that marks queries and passages: the collection keeps it.
  auto indexed = kotae("index " + docs + " --collection kitchen --exclude 'notes/*' --model e5-small-v2-int8 --json");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  auto lines = json_lines(indexed.out);
  ASSERT_EQ(lines.size(), 3u);  // two files and the summary
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["indexed"], 2);
  EXPECT_GT(lines.back()["chunks"].get<int>(), 1);

  auto again = kotae("index " + docs + " --collection kitchen --exclude 'notes/*' --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json_lines(again.out).back()["unchanged"], 2);

  auto found = kotae("search 'how long to knead dough' --collection kitchen --mode hybrid -k 2 --json");
  ASSERT_EQ(found.exit_code, 0) << found.err;
  const auto result = nlohmann::json::parse(found.out);
  ASSERT_FALSE(result["hits"].empty());
  const auto& top = result["hits"][0];
  EXPECT_EQ(top["rank"], 1);
  EXPECT_EQ(fs::path(top["document"].get<std::string>()).filename(), "bread.md");
  EXPECT_NE(top["text"].get<std::string>().find("Knead the dough"), std::string::npos);
  EXPECT_GT(top["bm25_rank"].get<int>(), 0);
  EXPECT_GT(top["vector_rank"].get<int>(), 0);
  auto info = kotae("search 'rocket fuel' --collection kitchen --mode vector -k 1 --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(fs::path(nlohmann::json::parse(info.out)["hits"][0]["document"].get<std::string>()).filename(),
            "rockets.txt");

  auto plain = kotae("search 'kerosene' --collection kitchen --mode bm25");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find(" 1. "), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("rockets.txt"), std::string::npos) << plain.out;

  auto removed = kotae("remove " + docs + "/rockets.txt --collection kitchen");
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  auto gone = kotae("search 'kerosene' --collection kitchen --mode bm25 --json");
  EXPECT_TRUE(nlohmann::json::parse(gone.out)["hits"].empty());
}

TEST_F(CliCommandsTest, ClearErrors) {
  auto missing = kotae("search 'anything' --collection nowhere");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no collection 'nowhere'"), std::string::npos) << missing.err;
  auto bad_name = kotae("index " + (root_ / "docs").string() + " --collection ../escape");
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_NE(bad_name.err.find("collection name"), std::string::npos) << bad_name.err;
  auto bad_mode = kotae("search 'x' --collection kitchen --mode fuzzy");
  EXPECT_EQ(bad_mode.exit_code, 2);
  auto other_model = kotae("index " + (root_ / "docs").string() + " --collection mixed --model all-minilm-l6-v2-int8");
  ASSERT_EQ(other_model.exit_code, 0) << other_model.err;
  auto mismatch = kotae("index " + (root_ / "docs").string() + " --collection mixed --model all-minilm-l6-v2");
  EXPECT_EQ(mismatch.exit_code, 2);
  EXPECT_NE(mismatch.err.find("all-minilm-l6-v2-int8"), std::string::npos) << mismatch.err;
}

TEST_F(CliCommandsTest, CollectionsAndModelsAreListedShownAndDeleted) {
  ASSERT_EQ(kotae("index " + (root_ / "docs").string() + " --collection kitchen --exclude 'notes/*'").exit_code, 0);
  auto listed = kotae("collections list --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const auto lines = json_lines(listed.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["name"], "kitchen");
  EXPECT_EQ(lines[0]["documents"], 2);
  EXPECT_GT(lines[0]["chunks"].get<int>(), 1);
  EXPECT_GT(lines[0]["bytes"].get<long long>(), 0);
  EXPECT_EQ(lines[0]["embedder"], "all-minilm-l6-v2/fp32");

  auto shown = kotae("collections show kitchen --json");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const auto kitchen = nlohmann::json::parse(shown.out);
  ASSERT_EQ(kitchen["document_list"].size(), 2u);
  EXPECT_EQ(kitchen["chunk_tokens"], 256);
  EXPECT_EQ(kotae("collections show nowhere").exit_code, 2);

  auto models = kotae("models list --json");
  ASSERT_EQ(models.exit_code, 0) << models.err;
  bool has_generator = false, has_default = false;
  for (const auto& m : json_lines(models.out)) {
    has_generator = has_generator || m["kind"] == "generator";
    has_default = has_default || (m["name"] == "all-minilm-l6-v2" && m["kind"] == "embedding" && m["dimension"] == 384);
  }
  EXPECT_TRUE(has_generator && has_default) << models.out;

  ASSERT_EQ(kotae("collections delete kitchen").exit_code, 0);
  EXPECT_TRUE(json_lines(kotae("collections list --json").out).empty());
  EXPECT_EQ(kotae("collections delete kitchen").exit_code, 2);
}

TEST_F(CliCommandsTest, UsageErrorsExitTwoAndHelpNamesTheExitCodes) {
  EXPECT_EQ(kotae("search --no-such-flag").exit_code, 2);
  EXPECT_EQ(kotae("collections").exit_code, 2);
  auto help = kotae("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes: 0 done"), std::string::npos) << help.out;
}

TEST_F(CliCommandsTest, EvalPrintsOneJsonObjectPerMode) {
  write("beir/corpus.jsonl",
        "{\"_id\": \"d1\", \"title\": \"Bread\", \"text\": \"Knead the dough and let it rise.\"}\n"
        "{\"_id\": \"d2\", \"title\": \"Rockets\", \"text\": \"Kerosene and liquid oxygen burn in the engine.\"}\n"
        "{\"_id\": \"d3\", \"title\": \"\", \"text\": \"Tomatoes need sun and water.\"}\n");
  write("beir/queries.jsonl",
        "{\"_id\": \"q1\", \"text\": \"rocket fuel\"}\n{\"_id\": \"q2\", \"text\": \"baking bread\"}\n"
        "{\"_id\": \"q3\", \"text\": \"no judgements\"}\n");
  write("beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td1\t1\n");
  auto eval = kotae("eval --dataset " + (root_ / "beir").string() + " --model all-minilm-l6-v2-int8 --json");
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const auto lines = json_lines(eval.out);
  ASSERT_EQ(lines.size(), 3u);
  std::vector<std::string> modes;
  for (const auto& line : lines) {
    modes.push_back(line["mode"]);
    EXPECT_EQ(line["queries"], 2);
    for (const char* key : {"mrr@10", "ndcg@10", "recall@10", "recall@100"}) {
      ASSERT_TRUE(line.contains(key)) << key;
      EXPECT_GE(line[key].get<double>(), 0.0);
      EXPECT_LE(line[key].get<double>(), 1.0);
    }
    EXPECT_EQ(line["recall@100"], 1.0);  // three documents: everything is in the top 100
  }
  EXPECT_EQ(modes, (std::vector<std::string>{"bm25", "vector", "hybrid"}));
  EXPECT_EQ(lines[1]["mrr@10"], 1.0) << "two obvious queries: the vector side ranks both first";

  // Two models side by side: a row per model and mode, each with its model's encode speed.
  auto both =
      kotae("eval --dataset " + (root_ / "beir").string() + " --models all-minilm-l6-v2,all-minilm-l6-v2-int8 --json");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const auto rows = json_lines(both.out);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0]["model"], "all-minilm-l6-v2");
  EXPECT_EQ(rows[3]["model"], "all-minilm-l6-v2-int8");
  EXPECT_NE(rows[0]["collection"], rows[3]["collection"]) << "each model indexes a collection of its own";
  for (const auto& row : rows) EXPECT_GT(row["encode_passages_per_s"].get<double>(), 0.0);
  auto table =
      kotae("eval --dataset " + (root_ / "beir").string() + " --models all-minilm-l6-v2,all-minilm-l6-v2-int8");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("all-minilm-l6-v2-int8    int8  hybrid"), std::string::npos) << table.out;

  // The default model at two precisions: rows of each, the INT8 ones with what they cost and gain.
  auto precisions = kotae("eval --dataset " + (root_ / "beir").string() + " --precision fp32,int8 --json");
  ASSERT_EQ(precisions.exit_code, 0) << precisions.err;
  const auto by_precision = json_lines(precisions.out);
  ASSERT_EQ(by_precision.size(), 6u);
  EXPECT_EQ(by_precision[0]["precision"], "fp32");
  EXPECT_EQ(by_precision[3]["precision"], "int8");
  EXPECT_EQ(by_precision[3]["embedder"], "all-minilm-l6-v2/fp32") << "one model at another precision";
  EXPECT_NE(by_precision[0]["collection"], by_precision[3]["collection"]);
  EXPECT_FALSE(by_precision[0].contains("ndcg@10_loss_vs_fp32"));
  ASSERT_TRUE(by_precision[5].contains("ndcg@10_loss_vs_fp32"));
  EXPECT_GT(by_precision[5]["encode_vs_fp32"].get<double>(), 0.0);
  auto unknown = kotae("eval --dataset " + (root_ / "beir").string() + " --precision fp8");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown precision 'fp8'"), std::string::npos) << unknown.err;

  write("bad/corpus.jsonl", "not json\n");
  write("bad/queries.jsonl", "");
  write("bad/qrels/test.tsv", "query-id\tcorpus-id\tscore\n");
  auto bad = kotae("eval --dataset " + (root_ / "bad").string() + " --json");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("corpus.jsonl:1"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kotae
