// Embedders that want texts marked by role (e5 reads "query: " and "passage: ") and embedders that
// read their vector off one token (bge's CLS pooling), with the real models setup installs.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "model/sentence_encoder.h"
#include "rag/chunk_embedding.h"
#include "support/test_data.h"

namespace kotae {
namespace {

std::unique_ptr<SentenceEncoder> load(const char* model) {
  EncoderOptions options;
  options.warm_up = false;
  auto loaded = SentenceEncoder::load(testing::model_dir(model), options);
  EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  return loaded ? std::move(*loaded) : nullptr;
}

double cosine(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * b[i];
  return sum;
}

TEST(InstructionEmbedders, PrefixesComeFromTheManifestAndOffsetsStayOnTheText) {
  auto e5 = load("e5-small-v2-int8");
  ASSERT_TRUE(e5);
  EXPECT_EQ(e5->prefixes().query, "query: ");
  EXPECT_EQ(e5->prefixes().passage, "passage: ");
  const std::string text = "Install a package.";
  const text::Encoding marked = e5->tokenize_as(TextRole::query, text);
  EXPECT_EQ(marked.ids, e5->tokenize("query: " + text).ids);
  // [CLS] query : install a package . [SEP]: the prefix's tokens count as special, the rest point into `text`.
  ASSERT_EQ(marked.size(), 8u);
  EXPECT_EQ(std::count(marked.special_tokens_mask.begin(), marked.special_tokens_mask.end(), 1), 4);
  EXPECT_EQ(marked.offsets[3], (std::pair<std::uint32_t, std::uint32_t>{0, 7}));
  EXPECT_EQ(marked.offsets[6], (std::pair<std::uint32_t, std::uint32_t>{17, 18}));

  auto minilm = load(kDefaultEmbeddingModel);
  ASSERT_TRUE(minilm);
  EXPECT_TRUE(minilm->prefixes().query.empty());
  EXPECT_EQ(minilm->tokenize_as(TextRole::query, text).ids, minilm->tokenize(text).ids);
}

TEST(InstructionEmbedders, QueriesAndPassagesGetTheirOwnVectors) {
  auto e5 = load("e5-small-v2-int8");
  ASSERT_TRUE(e5);
  const std::string text[] = {"How do I install a package?"};
  auto query = e5->embed(text, TextRole::query);
  auto passage = e5->embed(text, TextRole::passage);
  ASSERT_TRUE(query && passage);
  EXPECT_LT(cosine(query->row(0), passage->row(0)), 0.999);
  const text::Encoding marked[] = {e5->tokenize("passage: How do I install a package?")};
  auto by_hand = e5->embed_encoded(marked);
  ASSERT_TRUE(by_hand);
  EXPECT_GT(cosine(passage->row(0), by_hand->row(0)), 0.99999);
}

TEST(InstructionEmbedders, ClsModelsEmbedEachSentenceOfAChunkAlone) {
  auto bge = load("bge-small-en-v1.5-int8");
  ASSERT_TRUE(bge);
  ASSERT_EQ(bge->manifest().pooling, "cls");
  const std::string chunk = "Debian is a free operating system. Packages are installed with apt.";
  auto embedded = rag::embed_chunks(*bge, std::span(&chunk, 1));
  ASSERT_TRUE(embedded) << embedded.error().message;
  ASSERT_EQ(embedded->vectors.size(), 1u);
  ASSERT_EQ(embedded->sentences.size(), 1u);
  const auto& sentences = embedded->sentences[0];
  ASSERT_EQ(sentences.size(), 2u);
  EXPECT_EQ(chunk.substr(sentences[1].begin, sentences[1].end - sentences[1].begin),
            "Packages are installed with apt.");
  for (const auto& s : sentences) {
    const std::string alone[] = {chunk.substr(s.begin, s.end - s.begin)};
    auto direct = bge->embed(alone, TextRole::passage);
    ASSERT_TRUE(direct);
    // INT8 activations are scaled per run, so the same text in another run moves a little.
    EXPECT_GT(cosine(s.vector, direct->row(0)), 0.99);
  }
  auto whole = bge->embed(std::span(&chunk, 1), TextRole::passage);
  ASSERT_TRUE(whole);
  EXPECT_GT(cosine(embedded->vectors.row(0), whole->row(0)), 0.99);
}

}  // namespace
}  // namespace kotae
