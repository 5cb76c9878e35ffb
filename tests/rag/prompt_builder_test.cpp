// Prompt assembly, counted with a real tokenizer: a tiny generated GGUF's, through llama.cpp.
#include <gtest/gtest.h>

#include "model/llama_generator.h"
#include "rag/prompt_builder.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae::rag {
namespace {

Source retrieved(std::int64_t chunk, std::string title, std::uint32_t page, std::string text) {
  Source s;
  s.chunk_id = chunk;
  s.document = title + ".pdf";
  s.title = std::move(title);
  s.page_first = s.page_last = page;
  s.text = std::move(text);
  return s;
}

class PromptBuilderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("kotae-prompt-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(kotae::testing::write_tiny_llama_gguf(dir_ / "chat.gguf", {.context = 4096, .with_tokenizer = true}));
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<LlamaGenerator> generator(int context) {
    LlamaGeneratorOptions options;
    options.context_length = context;
    options.threads = 1;
    auto loaded = LlamaGenerator::load(dir_ / "chat.gguf", options);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded ? std::move(*loaded) : nullptr;
  }

  const std::vector<Source> sources_ = {
      retrieved(11, "Apt guide", 3, "APT resolves dependencies and fetches packages from mirrors."),
      retrieved(12, "Dpkg manual", 0, "dpkg installs a single package file and does not fetch anything."),
      retrieved(13, "Release notes", 7, std::string(600, 'r') + " end of the notes.")};
  static inline std::filesystem::path dir_;
};

TEST_F(PromptBuilderTest, NumbersTheSourcesAndAsksForCitations) {
  auto g = generator(4096);
  ASSERT_TRUE(g);
  auto prompt = build_prompt(*g, "How does APT get packages?", sources_, {}, 256);
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  ASSERT_EQ(prompt->messages.size(), 2u);
  EXPECT_EQ(prompt->messages[0].role, "system");
  EXPECT_NE(prompt->messages[0].content.find("[1]"), std::string::npos);
  const std::string& user = prompt->messages[1].content;
  EXPECT_NE(user.find("[1] Apt guide, page 3\nAPT resolves dependencies"), std::string::npos);
  EXPECT_NE(user.find("[2] Dpkg manual\ndpkg installs"), std::string::npos);
  EXPECT_NE(user.find("[3] Release notes, page 7"), std::string::npos);
  EXPECT_NE(
      user.find("Question: How does APT get packages?\n\nAnswer in a few sentences, each followed by the number of its "
                "source, like [1]."),
      std::string::npos);
  ASSERT_EQ(prompt->sources.size(), 3u);
  EXPECT_EQ(prompt->sources[2].number, 3);
  EXPECT_EQ(prompt->dropped_sources, 0u);
  EXPECT_LE(prompt->tokens + 256, g->context_tokens());
}

TEST_F(PromptBuilderTest, FitsASmallContextByDroppingTheWeakestSourcesThenCuttingTheLast) {
  auto g = generator(1024);  // tokens here are characters: ~900 left, the instruction takes a third
  ASSERT_TRUE(g);
  auto prompt = build_prompt(*g, "How does APT get packages?", sources_, {}, 128);
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  EXPECT_LE(prompt->tokens, g->context_tokens() - 128);
  EXPECT_GE(prompt->dropped_sources, 1u);  // the long release notes went first
  ASSERT_FALSE(prompt->sources.empty());
  EXPECT_EQ(prompt->sources[0].chunk_id, 11);
  // What the builder counted is what the model will read.
  const auto tokens = g->tokenize(*g->format_chat(prompt->messages), true).size();
  EXPECT_LE(tokens, g->context_tokens() - 128);

  auto tiny = build_prompt(*g, std::string(600, 'q'), sources_, {}, 128);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().code, ErrorCode::invalid_argument);
}

TEST_F(PromptBuilderTest, AFollowUpKeepsTheEarlierTurnVerbatimAndContinuesTheNumbers) {
  auto g = generator(4096);
  ASSERT_TRUE(g);
  Conversation conversation;
  auto first = build_prompt(*g, "How does APT get packages?", std::span(sources_).first(2), conversation, 256);
  ASSERT_TRUE(first.ok());
  conversation.turns.push_back({"How does APT get packages?", "From mirrors [1].", first->new_sources});

  // The second retrieval finds source 12 again and a new one.
  const std::vector<Source> again = {sources_[1], retrieved(14, "Sources list", 2, "sources.list names the mirrors.")};
  auto second = build_prompt(*g, "Where are mirrors configured?", again, conversation, 256);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->messages.size(), 4u);
  // The prefix is the first prompt plus its answer: a local model reuses its KV cache.
  EXPECT_EQ(second->messages[0].content, first->messages[0].content);
  EXPECT_EQ(second->messages[1].content, first->messages[1].content);
  EXPECT_EQ(second->messages[2].content, "From mirrors [1].");
  ASSERT_EQ(second->new_sources.size(), 1u);
  EXPECT_EQ(second->new_sources[0].number, 3);
  EXPECT_NE(second->messages[3].content.find("Also relevant: the sources above numbered [2]"), std::string::npos);
  EXPECT_EQ(second->sources.size(), 3u);  // [1], [2] from before and [3]

  // In a small context the earlier turn is condensed to its question and answer first.
  auto small = generator(1024);
  auto condensed = build_prompt(*small, "Where are mirrors configured?", again, conversation, 240);
  ASSERT_TRUE(condensed.ok()) << condensed.error().message;
  EXPECT_EQ(condensed->condensed_turns, 1u);
  EXPECT_EQ(condensed->history_turns, 1u);
  EXPECT_EQ(condensed->messages[1].content, "Question: How does APT get packages?");
  EXPECT_LE(condensed->tokens, small->context_tokens() - 240);
}

}  // namespace
}  // namespace kotae::rag
