// Ingestion and hybrid retrieval end to end, with the real int8 embedding model, real loaders,
// real SQLite: what a user of `kotae index` and `kotae search` relies on.

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <set>

#include "model/embedding_reranker.h"
#include "model/sentence_encoder.h"
#include "rag/file_selection.h"
#include "rag/ingester.h"
#include "search/hybrid_retriever.h"
#include "support/test_data.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class HybridSearchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2-int8"));
    ASSERT_TRUE(loaded) << loaded.error().message;
    encoder_ = std::move(*loaded).release();
  }
  static void TearDownTestSuite() { delete encoder_; }

  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-hybrid");
    docs_ = root_ / "docs";
    write(docs_ / "kitchen" / "bread.md",
          "# Baking bread\n\nTo bake sourdough bread, feed the starter the night before, mix flour, water and salt, "
          "and let the dough rise slowly in a cool place.\n\n## Oven\n\nBake the loaf at 230 degrees in a covered "
          "pot for forty minutes, then uncover it so the crust browns.\n");
    write(docs_ / "space" / "rockets.txt",
          "Liquid-fuelled rockets burn kerosene or hydrogen with liquid oxygen. The Saturn V carried astronauts "
          "to the Moon.\n\nSolid rocket boosters cannot be throttled once they are lit.\n");
    write(docs_ / "space" / "planets.html",
          "<html><head><title>Planets</title><style>p{color:red}</style></head><body><h1>Planets</h1>"
          "<p>Jupiter is the largest planet of the solar system; its Great Red Spot is a storm larger than Earth.</p>"
          "<p>Mars has the tallest volcano, Olympus Mons.</p></body></html>");
    write(docs_ / "garden" / "tomatoes.txt",
          "Tomatoes need full sun, regular watering and a stake to climb. Pinch out the side shoots.\n");
    store::CollectionInfo info{encoder_->id(), encoder_->dimension(), 128, 16};
    auto collection = store::Collection::open_or_create(root_ / "collection", info);
    ASSERT_TRUE(collection) << collection.error().message;
    collection_ = std::move(*collection);
  }
  void TearDown() override {
    collection_.reset();
    fs::remove_all(root_);
  }

  rag::IngestSummary ingest() {
    const std::vector<fs::path> paths{docs_};
    auto files = rag::select_files(paths, {});
    EXPECT_TRUE(files) << files.error().message;
    rag::Ingester ingester(*collection_, *encoder_, {{}, {128, 16}});
    auto summary = ingester.ingest_files(*files);
    EXPECT_TRUE(summary) << summary.error().message;
    return summary ? *summary : rag::IngestSummary{};
  }

  search::SearchResult search(const std::string& query, search::SearchMode mode, store::SearchFilter filter = {},
                              const Reranker* reranker = nullptr) {
    auto retriever = search::HybridRetriever::create(*collection_, encoder_, reranker);
    EXPECT_TRUE(retriever) << retriever.error().message;
    search::SearchOptions options;
    options.mode = mode;
    options.k = 5;
    options.filter = std::move(filter);
    auto result = retriever->search(query, options);
    EXPECT_TRUE(result) << result.error().message;
    return result ? *result : search::SearchResult{};
  }

  static std::string top_file(const search::SearchResult& result) {
    return result.hits.empty() ? "" : fs::path(result.hits[0].document_path).filename().string();
  }

  static SentenceEncoder* encoder_;
  fs::path root_, docs_;
  std::unique_ptr<store::Collection> collection_;
};
SentenceEncoder* HybridSearchTest::encoder_ = nullptr;

TEST_F(HybridSearchTest, IndexesOnceThenSkipsUnchangedFiles) {
  const auto first = ingest();
  EXPECT_EQ(first.files, 4u);
  EXPECT_EQ(first.indexed, 4u);
  EXPECT_GE(first.chunks, 4u);
  EXPECT_EQ(collection_->chunk_count(), first.chunks);
  const auto second = ingest();
  EXPECT_EQ(second.indexed, 0u);
  EXPECT_EQ(second.unchanged, 4u);
  EXPECT_EQ(second.chunks, 0u);
  EXPECT_EQ(collection_->chunk_count(), first.chunks);
  // Touched but not changed: the content hash says unchanged.
  fs::last_write_time(docs_ / "garden" / "tomatoes.txt", fs::file_time_type::clock::now());
  EXPECT_EQ(ingest().unchanged, 4u);
}

TEST_F(HybridSearchTest, EveryModeFindsTheRightDocument) {
  ingest();
  EXPECT_EQ(top_file(search("how do I bake sourdough bread", search::SearchMode::hybrid)), "bread.md");
  EXPECT_EQ(top_file(search("Olympus Mons", search::SearchMode::bm25)), "planets.html");
  // No shared word with the text: only the vector side can find it.
  EXPECT_EQ(top_file(search("vegetable gardening advice", search::SearchMode::vector)), "tomatoes.txt");
  const auto hybrid = search("largest planet storm", search::SearchMode::hybrid);
  ASSERT_FALSE(hybrid.hits.empty());
  EXPECT_EQ(top_file(hybrid), "planets.html");
  EXPECT_GT(hybrid.hits[0].bm25_rank, 0u);
  EXPECT_GT(hybrid.hits[0].vector_rank, 0u);
  EXPECT_EQ(hybrid.hits[0].document_title, "Planets");
  // The chunk's span points at its text in the stored document.
  auto document = collection_->document(hybrid.hits[0].chunk.document_id);
  ASSERT_TRUE(document && *document);
  const auto& chunk = hybrid.hits[0].chunk;
  EXPECT_EQ((*document)->text.substr(chunk.begin, chunk.end - chunk.begin), chunk.text);
  EXPECT_EQ(chunk.text.find("color:red"), std::string::npos);  // style dropped
}

TEST_F(HybridSearchTest, HeadingPathsAndNoDuplicateChunks) {
  ingest();
  const auto result = search("bake the loaf in a covered pot oven", search::SearchMode::hybrid);
  ASSERT_FALSE(result.hits.empty());
  EXPECT_EQ(top_file(result), "bread.md");
  std::set<std::int64_t> ids;
  for (const auto& hit : result.hits)
    EXPECT_TRUE(ids.insert(hit.chunk.id).second) << "chunk " << hit.chunk.id << " twice";
  EXPECT_EQ(result.hits[0].chunk.heading_path.front(), "Baking bread");
}

TEST_F(HybridSearchTest, FiltersByPathPrefixAndFormat) {
  ingest();
  const auto space = search("bread", search::SearchMode::hybrid, {(docs_ / "space").string(), {}});
  ASSERT_FALSE(space.hits.empty());
  for (const auto& hit : space.hits)
    EXPECT_TRUE(hit.document_path.starts_with((docs_ / "space").string())) << hit.document_path;
  const auto html = search("rockets", search::SearchMode::hybrid, {"", {"html"}});
  ASSERT_FALSE(html.hits.empty());
  for (const auto& hit : html.hits) EXPECT_EQ(hit.document_format, "html");
  for (auto mode : {search::SearchMode::bm25, search::SearchMode::vector}) {
    const auto txt = search("sourdough", mode, {"", {"txt"}});
    for (const auto& hit : txt.hits) EXPECT_EQ(hit.document_format, "txt");
  }
}

TEST_F(HybridSearchTest, ChangedFileIsReplacedAndRemovedFileIsGone) {
  ingest();
  write(docs_ / "space" / "rockets.txt", "Ion thrusters accelerate xenon ions with electric fields.\n");
  const auto again = ingest();
  EXPECT_EQ(again.indexed, 1u);
  EXPECT_TRUE(search("kerosene Saturn", search::SearchMode::bm25).hits.empty());
  EXPECT_EQ(top_file(search("xenon ion thrusters", search::SearchMode::bm25)), "rockets.txt");

  auto removed = collection_->remove_document((docs_ / "space" / "rockets.txt").string());
  ASSERT_TRUE(removed && *removed);
  EXPECT_TRUE(search("xenon", search::SearchMode::bm25).hits.empty());
  for (const auto& hit : search("xenon ion thrusters", search::SearchMode::vector).hits)
    EXPECT_NE(top_file({{hit}, {}}), "rockets.txt");
  auto report = collection_->check();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok()) << report->details;
}

TEST_F(HybridSearchTest, ABrokenFileIsReportedAndTheRestIndexed) {
  write(docs_ / "broken.pdf", "%PDF-1.7\nthis is not really a pdf\n");
  write(docs_ / "empty.txt", "");
  const auto summary = ingest();
  EXPECT_EQ(summary.files, 6u);
  EXPECT_EQ(summary.failed, 2u);
  EXPECT_EQ(summary.indexed, 4u);
}

TEST_F(HybridSearchTest, RerankStageReordersTheFusedCandidates) {
  ingest();
  std::shared_ptr<const Encoder> shared(encoder_, [](const Encoder*) {});
  EmbeddingReranker reranker(shared);
  const auto result = search("red storm on the biggest planet", search::SearchMode::hybrid, {}, &reranker);
  ASSERT_FALSE(result.hits.empty());
  EXPECT_EQ(top_file(result), "planets.html");
  for (std::size_t i = 0; i < result.hits.size(); ++i) {
    ASSERT_TRUE(result.hits[i].rerank_score.has_value());
    if (i > 0) {
      EXPECT_GE(*result.hits[i - 1].rerank_score, *result.hits[i].rerank_score);
    }
  }
}

TEST_F(HybridSearchTest, RefusesAnEncoderOtherThanTheCollections) {
  store::CollectionInfo other{"some-other-model/fp32", 384, 128, 16};
  auto collection = store::Collection::open_or_create(root_ / "other", other);
  ASSERT_TRUE(collection) << collection.error().message;
  auto retriever = search::HybridRetriever::create(**collection, encoder_);
  ASSERT_FALSE(retriever);
  EXPECT_EQ(retriever.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(retriever.error().message.find("some-other-model/fp32"), std::string::npos);
  // And the store itself refuses to open it with another embedder.
  store::CollectionInfo mine{encoder_->id(), encoder_->dimension(), 128, 16};
  auto reopened = store::Collection::open_or_create(root_ / "other", mine);
  ASSERT_FALSE(reopened);
  EXPECT_EQ(reopened.error().code, ErrorCode::invalid_argument);
}

}  // namespace
}  // namespace kotae
