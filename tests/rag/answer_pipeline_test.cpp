// The answer pipeline end to end on the Debian FAQ (installed by scripts/setup), indexed with the
// default embedding model: extractive answers with exact citations, the "not covered" answer, and the
// generator back-ends on a tiny generated GGUF, locally and through a real llama-server.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "model/llama_generator.h"
#include "model/openai_chat_client.h"
#include "model/sentence_encoder.h"
#include "rag/answer_pipeline.h"
#include "rag/file_selection.h"
#include "rag/ingester.h"
#include "support/llama_server.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae::rag {
namespace {

namespace fs = std::filesystem;

// A test's generator lent to a back-end, which would otherwise share its ownership.
std::shared_ptr<Generator> borrowed(Generator* generator) {
  return {std::shared_ptr<Generator>{}, generator};
}

class AnswerPipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("kotae-answer-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    auto encoder = SentenceEncoder::load(kotae::testing::model_dir(kDefaultEmbeddingModel));
    ASSERT_TRUE(encoder.ok()) << encoder.error().message;
    encoder_ = std::move(*encoder).release();
    store::CollectionInfo info{encoder_->id(), encoder_->dimension(), 256, 32};
    auto collection = store::Collection::open_or_create(root_ / "debian-faq", info);
    ASSERT_TRUE(collection.ok()) << collection.error().message;
    collection_ = std::move(*collection).release();
    const std::vector<fs::path> faq = {"/usr/share/doc/debian/FAQ"};
    auto files = select_files(faq, {{"*.en.html"}, {}});
    ASSERT_TRUE(files.ok() && files->size() > 10) << "the Debian FAQ is missing (scripts/setup installs debian-faq)";
    Ingester ingester(*collection_, *encoder_, {{}, {256, 32}});
    auto summary = ingester.ingest_files(*files);
    ASSERT_TRUE(summary.ok()) << summary.error().message;
    // Its tokens are single characters: a context of 16k holds what 4k hold for a real model.
    ASSERT_TRUE(
        kotae::testing::write_tiny_llama_gguf(root_ / "tiny-chat.gguf", {.context = 16384, .with_tokenizer = true}));
  }
  static void TearDownTestSuite() {
    delete collection_;
    delete encoder_;
    fs::remove_all(root_);
  }

  // SmolLM2-135M-Instruct, the instruction-tuned model scripts/setup installs.
  static std::unique_ptr<LlamaGenerator> instruct_model() {
    auto loaded = LlamaGenerator::load(kotae::testing::model_dir("smollm2-135m-instruct") / "model.gguf",
                                       {.context_length = 4096, .parallel = 2, .threads = 2});
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded ? std::move(*loaded) : nullptr;
  }

  static AnswerOptions greedy(int max_tokens) {
    AnswerOptions options;
    options.generation.max_tokens = max_tokens;
    options.generation.temperature = 0.0f;
    return options;
  }

  // The cited bytes are exactly the document's bytes at [start, end).
  static void expect_exact(const Citation& c) {
    auto document = collection_->find_document(c.document);
    ASSERT_TRUE(document.ok() && document->has_value());
    auto full = collection_->document((*document)->id);
    ASSERT_TRUE(full.ok() && full->has_value());
    ASSERT_LE(c.end, (*full)->text.size());
    EXPECT_EQ((*full)->text.substr(c.start, c.end - c.start), c.text);
  }

  static inline fs::path root_;
  static inline SentenceEncoder* encoder_ = nullptr;
  static inline store::Collection* collection_ = nullptr;
};

TEST_F(AnswerPipelineTest, ExtractsACitedAnswerFromTheFaq) {
  AnswerPipeline pipeline(*encoder_, nullptr, {extractive_backend()});
  std::vector<AnswerEvent::Kind> kinds;
  auto answer = pipeline.ask("What is a virtual package?", *collection_, {}, nullptr, [&](const AnswerEvent& e) {
    kinds.push_back(e.kind);
    return true;
  });
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->backend, "extractive");
  EXPECT_TRUE(answer->covered);
  EXPECT_NE(answer->text.find("A virtual package is a generic name"), std::string::npos) << answer->text;
  ASSERT_FALSE(answer->citations.empty());
  bool cites_the_definition = false;
  for (const auto& c : answer->citations) {
    expect_exact(c);
    EXPECT_EQ(answer->text.substr(c.answer_start, c.answer_end - c.answer_start), citation_marker(c.number));
    if (c.text.starts_with("A virtual package is a generic name")) {
      cites_the_definition = true;
      EXPECT_TRUE(c.document.ends_with("pkg-basics.en.html")) << c.document;
    }
  }
  EXPECT_TRUE(cites_the_definition);
  using Kind = AnswerEvent::Kind;
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::sources, Kind::token, Kind::citations, Kind::timings, Kind::done}));
  EXPECT_GT(answer->timings.embed, 0);
  EXPECT_GT(answer->timings.total, answer->timings.generate);
}

TEST_F(AnswerPipelineTest, PoolsSentencesAtQueryTimeForChunksStoredWithoutThem) {
  // A collection indexed before sentence vectors were stored: its chunks have none.
  const fs::path dir = root_ / "older";
  {
    auto older = store::Collection::open_or_create(dir, collection_->info());
    ASSERT_TRUE(older.ok());
    const std::vector<fs::path> file = {"/usr/share/doc/debian/FAQ/pkg-basics.en.html"};
    Ingester ingester(**older, *encoder_, {{}, {256, 32}});
    ASSERT_TRUE(ingester.ingest_files(file).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "kotae.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE chunks SET sentences = x''", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto older = store::Collection::open(dir);
  ASSERT_TRUE(older.ok()) << older.error().message;

  AnswerPipeline pipeline(*encoder_, nullptr, {extractive_backend()});
  auto answer = pipeline.ask("What is a virtual package?", **older, {});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->backend, "extractive");
  EXPECT_NE(answer->text.find("A virtual package is a generic name"), std::string::npos) << answer->text;
}

TEST_F(AnswerPipelineTest, SaysTheDocumentsDoNotCoverAnUnrelatedQuestion) {
  AnswerPipeline pipeline(*encoder_, nullptr, {extractive_backend()});
  auto answer = pipeline.ask("How long should sourdough bread rise before baking?", *collection_, {});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_FALSE(answer->covered);
  EXPECT_EQ(answer->backend, "none");
  EXPECT_EQ(answer->text, kNotCovered);
  EXPECT_TRUE(answer->citations.empty());
  EXPECT_FALSE(answer->sources.empty());  // what was found, for the curious

  AnswerOptions lenient;
  lenient.min_relevance = -1;  // the threshold is the user's to set
  auto forced = pipeline.ask("How long should sourdough bread rise before baking?", *collection_, lenient);
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->covered);
}

TEST_F(AnswerPipelineTest, FallsBackToTheNextBackEndAndSaysWhichAnswered) {
  auto llama_missing = LlamaGenerator::load(root_ / "no-such-model.gguf");
  ASSERT_FALSE(llama_missing.ok());
  OpenAIChatOptions down;
  down.base_url = "http://127.0.0.1:" + std::to_string(kotae::testing::free_port()) + "/v1";
  down.max_retries = 1;
  down.retry_backoff_ms = 10;
  auto client = OpenAIChatClient::create(down);
  ASSERT_TRUE(client.ok());
  AnswerPipeline pipeline(*encoder_, nullptr,
                          {{"llama.cpp", nullptr, llama_missing.error().message},
                           generator_backend("openai", borrowed(client->get())),
                           extractive_backend()});
  auto answer = pipeline.ask("How do I upgrade to the next Debian release?", *collection_, {});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->backend, "extractive");
  ASSERT_EQ(answer->fallbacks.size(), 2u);
  EXPECT_EQ(answer->fallbacks[0].backend, "llama.cpp");
  EXPECT_NE(answer->fallbacks[0].error.find("no-such-model.gguf"), std::string::npos);
  EXPECT_EQ(answer->fallbacks[1].backend, "openai");
  EXPECT_NE(answer->fallbacks[1].error.find(down.base_url), std::string::npos);

  // With nothing left to fall back to, the error names every back-end's reason.
  AnswerPipeline nothing(*encoder_, nullptr, {generator_backend("openai", borrowed(client->get()))});
  auto failed = nothing.ask("How do I upgrade to the next Debian release?", *collection_, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("openai"), std::string::npos);
}

TEST_F(AnswerPipelineTest, ALocalModelStreamsItsAnswerAndAFollowUpReusesThePrefix) {
  auto llama = instruct_model();
  ASSERT_TRUE(llama);
  AnswerPipeline pipeline(*encoder_, nullptr,
                          {generator_backend("llama.cpp", borrowed(llama.get())), extractive_backend()});
  Conversation conversation;
  std::string streamed;
  auto first = pipeline.ask("How do I upgrade to the next Debian release?", *collection_, greedy(64), &conversation,
                            [&](const AnswerEvent& e) {
                              if (e.kind == AnswerEvent::Kind::token) streamed += e.token;
                              return true;
                            });
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->backend, "llama.cpp");
  EXPECT_FALSE(streamed.empty());
  EXPECT_GT(first->generation.generated_tokens, 0u);
  EXPECT_EQ(first->generation.reused_prompt_tokens, 0u);
  ASSERT_EQ(conversation.turns.size(), 1u);
  EXPECT_EQ(conversation.turns[0].sources.size(), first->sources.size());
  EXPECT_EQ(first->sources.front().number, 1);
  // Whatever it cites is one of the sources it was shown, quoted to the byte.
  for (const auto& c : first->citations) {
    EXPECT_TRUE(std::any_of(first->sources.begin(), first->sources.end(),
                            [&](const Source& s) { return s.number == c.number; }));
    expect_exact(c);
  }

  auto second = pipeline.ask("And how do I keep it up to date?", *collection_, greedy(64), &conversation);
  ASSERT_TRUE(second.ok()) << second.error().message;
  ASSERT_EQ(conversation.turns.size(), 2u);
  // The instruction, the first question with its sources and the first answer were not decoded again.
  EXPECT_GT(second->generation.reused_prompt_tokens, first->generation.prompt_tokens * 9 / 10);
  EXPECT_LT(second->generation.reused_prompt_tokens, second->generation.prompt_tokens);
}

TEST_F(AnswerPipelineTest, AnOpenAICompatibleServerAnswers) {
  kotae::testing::LlamaServer server(kotae::testing::llama_server_binary(KOTAE_LLAMA_SERVER), root_ / "tiny-chat.gguf",
                                     {"-c", "16384", "-t", "1", "-np", "1", "--grammar", "root ::= [ -~]*"},
                                     root_ / "server.log");
  ASSERT_TRUE(server.error().empty()) << server.error();
  OpenAIChatOptions options;
  options.base_url = server.base_url();
  options.context_tokens = 4096;
  auto client = OpenAIChatClient::create(options);
  ASSERT_TRUE(client.ok());
  AnswerPipeline pipeline(*encoder_, nullptr,
                          {generator_backend("openai", borrowed(client->get())), extractive_backend()});
  std::size_t pieces = 0;
  auto answer =
      pipeline.ask("What is a virtual package?", *collection_, greedy(16), nullptr, [&](const AnswerEvent& e) {
        pieces += e.kind == AnswerEvent::Kind::token;
        return true;
      });
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->backend, "openai") << (answer->fallbacks.empty() ? "" : answer->fallbacks[0].error);
  EXPECT_TRUE(answer->fallbacks.empty());
  EXPECT_GT(pieces, 1u);
  EXPECT_GT(answer->generation.prompt_tokens, 100u);
}

}  // namespace
}  // namespace kotae::rag
