// The cross-encoder against ONNX Runtime's Python API on a tiny random-weight BERT cross-encoder
// (scripts/python/make_test_cross_encoder.py; reference from tests/reference/
// make_cross_encoder_reference.py, both run by CTest fixtures), and the embedding fallback scorer on
// the real default embedding model. The random model says nothing about ranking quality.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "model/cross_encoder.h"
#include "model/embedding_reranker.h"
#include "model/sentence_encoder.h"
#include "support/test_data.h"

namespace kotae {
namespace {

const std::filesystem::path kReferences = KOTAE_CROSS_ENCODER_REFERENCE_DIR;

struct ReferenceCase {
  std::string query;
  std::vector<std::string> passages;
  std::vector<std::string> strategy;
  std::vector<std::vector<std::int32_t>> ids, type_ids;
  std::vector<float> scores;
};

std::vector<ReferenceCase> load_reference(const std::string& labels) {
  std::ifstream in(kReferences / ("reference-" + labels + ".json"));
  EXPECT_TRUE(in) << "missing reference in " << kReferences << " (run the CrossEncoderReference fixture tests)";
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<ReferenceCase> cases;
  if (doc.is_discarded()) return cases;
  for (const auto& c : doc.at("cases")) {
    ReferenceCase one;
    c.at("query").get_to(one.query);
    c.at("passages").get_to(one.passages);
    c.at("strategy").get_to(one.strategy);
    c.at("ids").get_to(one.ids);
    c.at("type_ids").get_to(one.type_ids);
    c.at("scores").get_to(one.scores);
    cases.push_back(std::move(one));
  }
  return cases;
}

std::filesystem::path model_path(const std::string& labels) {
  return kReferences / ("model-" + labels);
}

std::unique_ptr<CrossEncoder> load_model(const std::string& labels, CrossEncoderOptions options = {}) {
  auto model = CrossEncoder::load(model_path(labels), options);
  EXPECT_TRUE(model.ok()) << model.error().message;
  return model ? std::move(*model) : nullptr;
}

// A copy of the 1-label test model in a temp folder, for tests that break it.
std::filesystem::path copy_of_test_model() {
  const auto dir = testing::fresh_temp_dir("kotae-cross-encoder");
  for (const auto& entry : std::filesystem::directory_iterator(model_path("1"))) {
    std::filesystem::copy_file(entry.path(), dir / entry.path().filename());
  }
  return dir;
}

void edit_manifest(const std::filesystem::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(dir / "manifest.json");
  auto manifest = nlohmann::json::parse(in);
  in.close();
  edit(manifest);
  std::ofstream(dir / "manifest.json") << manifest.dump(2);
}

class CrossEncoderReference : public ::testing::TestWithParam<int> {
 protected:
  std::string labels() const { return std::to_string(GetParam()); }
};

TEST_P(CrossEncoderReference, TokensAndScoresMatchOnnxRuntimePython) {
  const auto cases = load_reference(labels());
  ASSERT_FALSE(cases.empty());
  auto model = load_model(labels());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->provider(), "CPUExecutionProvider");
  double max_diff = 0;
  std::size_t pairs = 0, fallbacks = 0;
  for (const auto& c : cases) {
    for (std::size_t i = 0; i < c.passages.size(); ++i) {
      const auto encoding = model->encode(c.query, c.passages[i]);
      EXPECT_EQ(encoding.ids, c.ids[i]) << "query '" << c.query.substr(0, 40) << "', passage " << i;
      EXPECT_EQ(encoding.type_ids, c.type_ids[i]) << "query '" << c.query.substr(0, 40) << "', passage " << i;
      fallbacks += c.strategy[i] == "longest_first";
    }
    auto scores = model->score(c.query, c.passages);
    ASSERT_TRUE(scores.ok()) << scores.error().message;
    ASSERT_EQ(scores->size(), c.passages.size());
    for (std::size_t i = 0; i < scores->size(); ++i) {
      EXPECT_NEAR((*scores)[i], c.scores[i], 1e-4) << "query '" << c.query.substr(0, 40) << "', passage " << i;
      max_diff = std::max(max_diff, std::abs(double((*scores)[i]) - c.scores[i]));
      ++pairs;
    }
  }
  // The reference must exercise both strategies, or the fallback goes untested.
  EXPECT_GT(fallbacks, 0u);
  EXPECT_LT(fallbacks, pairs);
  std::printf("[ measured ] %zu pairs, max |C++ - Python| = %.3g\n", pairs, max_diff);
  RecordProperty("max_abs_diff", std::to_string(max_diff));
}

INSTANTIATE_TEST_SUITE_P(Labels, CrossEncoderReference, ::testing::Values(1, 2));

TEST(CrossEncoder, SortedSubBatchesGiveScoresBackInThePassagesOrder) {
  const auto cases = load_reference("1");
  ASSERT_FALSE(cases.empty());
  CrossEncoderOptions options;
  options.max_batch_items = 2;  // several runs, each of pairs of other lengths than their neighbours
  auto model = load_model("1", options);
  ASSERT_NE(model, nullptr);
  const auto& c = cases.front();
  ASSERT_GE(c.passages.size(), 5u);
  auto together = model->score(c.query, c.passages);
  ASSERT_TRUE(together.ok()) << together.error().message;
  std::vector<std::string> reversed(c.passages.rbegin(), c.passages.rend());
  auto backwards = model->score(c.query, reversed);
  ASSERT_TRUE(backwards.ok()) << backwards.error().message;
  for (std::size_t i = 0; i < c.passages.size(); ++i) {
    auto alone = model->score(c.query, std::span(&c.passages[i], 1));
    ASSERT_TRUE(alone.ok()) << alone.error().message;
    EXPECT_NEAR((*together)[i], (*alone)[0], 1e-5) << "passage " << i;
    EXPECT_NEAR((*backwards)[c.passages.size() - 1 - i], (*alone)[0], 1e-5) << "passage " << i;
  }
  // The passages really score differently, so a mixed-up order could not pass.
  const auto [low, high] = std::minmax_element(together->begin(), together->end());
  EXPECT_GT(*high - *low, 0.1f);
  auto none = model->score(c.query, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(CrossEncoder, TruncationCutsThePassageByTokensAndKeepsTheQuery) {
  auto model = load_model("1");
  ASSERT_NE(model, nullptr);
  auto tokenizer = text::WordPieceTokenizer::from_tokenizer_json(model_path("1") / "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  ASSERT_EQ(model->manifest().max_length, 512);

  const std::string query = "How do I upgrade Debian to the next stable release?";
  std::string passage;
  for (int i = 0; i < 120; ++i) passage += "Run apt full-upgrade after editing sources.list, then reboot. ";
  const auto q = tokenizer->tokenize(query), p = tokenizer->tokenize(passage);
  ASSERT_GT(p.size(), 1000u);

  const auto pair = model->encode(query, passage);
  ASSERT_EQ(pair.size(), 512u);
  const std::size_t kept = 512 - 3 - q.size();
  // [CLS] the whole query [SEP] the passage's first `kept` tokens [SEP]
  EXPECT_TRUE(std::equal(q.ids.begin(), q.ids.end(), pair.ids.begin() + 1));
  EXPECT_TRUE(std::equal(p.ids.begin(), p.ids.begin() + kept, pair.ids.begin() + 2 + q.size()));
  EXPECT_EQ(std::count(pair.type_ids.begin(), pair.type_ids.end(), 1), static_cast<long>(kept + 1));
  // The cut falls on the token boundary, far before the passage's last character.
  EXPECT_EQ(pair.offsets[pair.size() - 2], p.offsets[kept - 1]);
  EXPECT_LT(pair.offsets[pair.size() - 2].second, passage.size() / 2);

  // A query that alone fills the window is cut too (longest_first), still to the token limit.
  std::string long_query;
  for (int i = 0; i < 200; ++i) long_query += "why does apt fail ";
  const auto fallback = model->encode(long_query, "short passage");
  EXPECT_EQ(fallback.size(), 512u);
  EXPECT_EQ(std::count(fallback.type_ids.begin(), fallback.type_ids.end(), 1), 3);  // "short passage" [SEP]
}

// The tokenizer's only_second against Hugging Face tokenizers 0.22.1 with max_length 12 (ids taken
// from `Tokenizer.encode` with `enable_truncation(12, strategy=...)` on the BERT uncased vocabulary).
TEST(CrossEncoder, OnlySecondTruncationMatchesHuggingFace) {
  auto tokenizer = text::WordPieceTokenizer::from_tokenizer_json(model_path("1") / "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  using text::PairTruncation;
  auto only_second = tokenizer->encode_pair("a b c d e f", "g h i j k l m n", 12, PairTruncation::only_second);
  EXPECT_EQ(only_second.ids,
            (std::vector<std::int32_t>{101, 1037, 1038, 1039, 1040, 1041, 1042, 102, 1043, 1044, 1045, 102}));
  EXPECT_EQ(only_second.type_ids, (std::vector<std::int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
  // The default stays longest_first, with or without the parameter.
  const std::vector<std::int32_t> longest = {101, 1037, 1038, 1039, 1040, 102, 1043, 1044, 1045, 1046, 1047, 102};
  EXPECT_EQ(tokenizer->encode_pair("a b c d e f", "g h i j k l m n", 12).ids, longest);
  EXPECT_EQ(tokenizer->encode_pair("a b c d e f", "g h i j k l m n", 12, PairTruncation::longest_first).ids, longest);
  // One passage token left: still only_second. None left: longest_first (tokenizers would raise).
  EXPECT_EQ(tokenizer->encode_pair("a b c d e f g h", "x y", 12, PairTruncation::only_second).ids,
            (std::vector<std::int32_t>{101, 1037, 1038, 1039, 1040, 1041, 1042, 1043, 1044, 102, 1060, 102}));
  EXPECT_EQ(tokenizer->encode_pair("a b c d e f g h i", "x y", 12, PairTruncation::only_second).ids,
            tokenizer->encode_pair("a b c d e f g h i", "x y", 12).ids);
  // Short enough: nothing cut; an empty passage still gets its [SEP].
  EXPECT_EQ(tokenizer->encode_pair("a b c", "", 12, PairTruncation::only_second).ids,
            (std::vector<std::int32_t>{101, 1037, 1038, 1039, 102, 102}));
}

TEST(CrossEncoderLoad, RefusesAManifestWithTheWrongChecksum) {
  const auto dir = copy_of_test_model();
  const std::string wrong(64, 'e');
  edit_manifest(dir, [&](nlohmann::json& m) {
    for (auto& f : m["files"]) {
      if (f["path"] == "model.onnx") f["sha256"] = wrong;
    }
  });
  auto model = CrossEncoder::load(dir);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::corrupt);
  EXPECT_NE(model.error().message.find((dir / "model.onnx").string()), std::string::npos) << model.error().message;
  EXPECT_NE(model.error().message.find("manifest says " + wrong), std::string::npos) << model.error().message;
  std::filesystem::remove_all(dir);
}

TEST(CrossEncoderLoad, AWrongOutputNameIsAClearError) {
  const auto dir = copy_of_test_model();
  edit_manifest(dir, [](nlohmann::json& m) { m["output"] = "scores"; });
  auto model = CrossEncoder::load(dir);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::model);
  const auto& message = model.error().message;
  EXPECT_NE(message.find((dir / "model.onnx").string()), std::string::npos) << message;
  EXPECT_NE(message.find("output 'scores' is not in the model"), std::string::npos) << message;
  EXPECT_NE(message.find("logits"), std::string::npos) << message;  // names what the model has
  std::filesystem::remove_all(dir);
}

TEST(CrossEncoderLoad, AnEmbeddingModelIsNotAReranker) {
  auto model = CrossEncoder::load(testing::model_dir("all-minilm-l6-v2"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::model);
  EXPECT_NE(model.error().message.find("not reranker"), std::string::npos) << model.error().message;
}

TEST(EmbeddingReranker, RanksTheRelevantPassageAboveAnUnrelatedOne) {
  auto encoder = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"));
  ASSERT_TRUE(encoder.ok()) << encoder.error().message;
  const EmbeddingReranker reranker(std::shared_ptr<const Encoder>(std::move(*encoder)));
  EXPECT_EQ(reranker.id(), "embedding:all-minilm-l6-v2/fp32");
  const std::vector<std::string> passages = {
      "Whisk two eggs with a pinch of salt and fold in the flour for the batter.",
      "To move Debian to the next stable release, update sources.list and run apt full-upgrade.",
      "",
  };
  auto scores = reranker.score("How do I upgrade Debian to the next release?", passages);
  ASSERT_TRUE(scores.ok()) << scores.error().message;
  ASSERT_EQ(scores->size(), 3u);
  EXPECT_GT((*scores)[1], 0.5f);
  EXPECT_LT((*scores)[0], 0.2f);
  EXPECT_GT((*scores)[1], (*scores)[0] + 0.3f);
  for (float s : *scores) {
    EXPECT_GE(s, -1.0f);
    EXPECT_LE(s, 1.0f + 1e-6f);
  }
  auto none = reranker.score("anything", {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace kotae
