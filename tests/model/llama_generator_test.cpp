#include <gtest/gtest.h>

#include <algorithm>

#include "model/llama_generator.h"
#include "model/stop_sequence_filter.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"
#include "text/unicode.h"

namespace kotae {
namespace {

TEST(StopSequenceFilter, EndsBeforeAStopSequenceSplitAcrossPieces) {
  StopSequenceFilter filter({"STOP"});
  std::string shown = filter.push("Hel");
  shown += filter.push("lo ST");
  EXPECT_EQ(shown, "Hello ");  // "ST" might begin the stop sequence: held back
  shown += filter.push("OP and more");
  EXPECT_TRUE(filter.stopped());
  EXPECT_EQ(shown + filter.finish(), "Hello ");
  EXPECT_EQ(filter.push("ignored"), "");
}

TEST(StopSequenceFilter, ReleasesHeldTextThatTurnsOutNotToStop) {
  StopSequenceFilter filter({"</end>", "\n\n"});
  EXPECT_EQ(filter.push("a</e"), "a");
  EXPECT_EQ(filter.push("x"), "</ex");
  EXPECT_EQ(filter.push("b\n"), "b");
  EXPECT_EQ(filter.push("c"), "\nc");
  EXPECT_FALSE(filter.stopped());
  EXPECT_EQ(filter.finish(), "");
}

TEST(StopSequenceFilter, ShowsWholeUtf8CharactersAndReplacesInvalidBytes) {
  StopSequenceFilter filter({});
  EXPECT_EQ(filter.push("caf\xC3"), "caf");
  EXPECT_EQ(filter.push("\xA9!"), "\xC3\xA9!");
  EXPECT_EQ(filter.push("\xFF"
                        "a"),
            "\xEF\xBF\xBD"
            "a");
  EXPECT_EQ(filter.push("\xE2\x96"), "");
  EXPECT_EQ(filter.finish(), "\xEF\xBF\xBD\xEF\xBF\xBD");  // an unfinished character at the end
}

class LlamaGeneratorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("kotae-generator-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*dir_);
    ASSERT_TRUE(testing::write_tiny_llama_gguf(*dir_ / "chat.gguf", {.context = 512, .with_tokenizer = true}));
    ASSERT_TRUE(testing::write_tiny_llama_gguf(*dir_ / "no-vocab.gguf", {}));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::unique_ptr<LlamaGenerator> load(LlamaGeneratorOptions options = {}) {
    options.threads = 2;
    auto generator = LlamaGenerator::load(*dir_ / "chat.gguf", options);
    EXPECT_TRUE(generator.ok()) << generator.error().message;
    return generator ? std::move(*generator) : nullptr;
  }
  static inline std::filesystem::path* dir_ = nullptr;
};

const std::vector<ChatMessage> kQuestion = {{"system", "Answer from the sources."}, {"user", "What is apt?"}};

TEST_F(LlamaGeneratorTest, FormatsWithTheChatTemplateFromTheModel) {
  auto generator = load();
  ASSERT_TRUE(generator);
  auto prompt = generator->format_chat(kQuestion);
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  EXPECT_EQ(*prompt,
            "<|im_start|>system\nAnswer from the sources.<|im_end|>\n<|im_start|>user\nWhat is apt?<|im_end|>\n"
            "<|im_start|>assistant\n");
  // Control tokens in the formatted prompt are single tokens, not their letters.
  const auto tokens = generator->tokenize("<|im_start|>", true);
  EXPECT_EQ(std::count(tokens.begin(), tokens.end(), 3), 1);
  EXPECT_EQ(generator->context_tokens(), 512u);
  EXPECT_GT(generator->tokens_per_message(), 3u);
}

TEST_F(LlamaGeneratorTest, StreamsWholeCharactersThatAddUpToTheAnswer) {
  auto generator = load();
  ASSERT_TRUE(generator);
  std::string streamed;
  int pieces = 0;
  auto result =
      generator->generate(kQuestion, {.max_tokens = 24, .temperature = 1.0f, .seed = 7}, [&](std::string_view piece) {
        streamed += piece;
        ++pieces;
        return true;
      });
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(streamed, result->text);
  EXPECT_GT(pieces, 1);
  EXPECT_GT(result->stats.generated_tokens, 0u);
  EXPECT_LE(result->stats.generated_tokens, 24u);
  EXPECT_GT(result->stats.prompt_tokens, 10u);
  EXPECT_GT(result->stats.prompt_ms, 0.0);
  EXPECT_EQ(result->text, text::valid_utf8(result->text)) << "invalid UTF-8 reached the caller";
}

TEST_F(LlamaGeneratorTest, SameSeedSameAnswerAndAStopSequenceCutsItShort) {
  auto generator = load({.reuse_prefix = false});
  ASSERT_TRUE(generator);
  const GenerationOptions sampled{.max_tokens = 60, .temperature = 1.0f, .seed = 11};
  auto first = generator->generate(kQuestion, sampled);
  auto second = generator->generate(kQuestion, sampled);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->text, second->text);
  ASSERT_GE(first->text.size(), 12u) << "random weights ended the turn early; change the seed";

  // A stop sequence taken from the middle of the answer: the same run ends right before it.
  const std::string stop = first->text.substr(first->text.size() / 2, 2);
  GenerationOptions with_stop = sampled;
  with_stop.stop = {stop};
  auto stopped = generator->generate(kQuestion, with_stop);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->stats.finish_reason, "stop");
  EXPECT_EQ(stopped->text, first->text.substr(0, first->text.find(stop)));
}

TEST_F(LlamaGeneratorTest, NeverOverflowsTheContext) {
  auto generator = load({.context_length = 256});
  ASSERT_TRUE(generator);
  const std::size_t context = generator->context_tokens();
  EXPECT_EQ(context, 256u);
  const std::vector<ChatMessage> too_long = {{"user", std::string(context + 10, 'x')}};
  auto refused = generator->generate(too_long, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(refused.error().message.find("context"), std::string::npos);

  // max_tokens beyond the room left is clipped to it.
  const std::vector<ChatMessage> fits = {{"user", std::string(context - 40, 'y')}};
  auto clipped = generator->generate(fits, {.max_tokens = 1000, .temperature = 0.0f});
  ASSERT_TRUE(clipped.ok()) << clipped.error().message;
  EXPECT_LE(clipped->stats.prompt_tokens + clipped->stats.generated_tokens, context);
  EXPECT_GT(clipped->stats.prompt_tokens, context - 40);
}

TEST_F(LlamaGeneratorTest, AFollowUpTurnReusesTheConversationsPrefix) {
  auto generator = load();
  ASSERT_TRUE(generator);
  const GenerationOptions greedy{.max_tokens = 16, .temperature = 0.0f};
  auto turn1 = generator->generate(kQuestion, greedy);
  ASSERT_TRUE(turn1.ok());
  EXPECT_EQ(turn1->stats.reused_prompt_tokens, 0u);

  std::vector<ChatMessage> follow_up = kQuestion;
  follow_up.push_back({"assistant", turn1->text});
  follow_up.push_back({"user", "And dpkg?"});
  auto turn2 = generator->generate(follow_up, greedy);
  ASSERT_TRUE(turn2.ok());
  const std::size_t first_prompt = generator->tokenize(*generator->format_chat(kQuestion), true).size();
  EXPECT_GE(turn2->stats.reused_prompt_tokens, first_prompt - 4);  // the assistant header may tokenise differently
  EXPECT_LT(turn2->stats.reused_prompt_tokens, turn2->stats.prompt_tokens);

  // Reusing the cache changes nothing in the answer: a generator without reuse says the same.
  auto fresh = load({.reuse_prefix = false});
  ASSERT_TRUE(fresh);
  auto again = fresh->generate(follow_up, greedy);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stats.reused_prompt_tokens, 0u);
  EXPECT_EQ(again->text, turn2->text);
}

TEST_F(LlamaGeneratorTest, TheCallbackCancels) {
  auto generator = load();
  ASSERT_TRUE(generator);
  std::string seen;
  auto result =
      generator->generate(kQuestion, {.max_tokens = 40, .temperature = 1.0f, .seed = 3}, [&](std::string_view piece) {
        seen += piece;
        return false;
      });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->stats.finish_reason, "cancelled");
  EXPECT_EQ(result->text, seen);
  EXPECT_FALSE(seen.empty());
}

TEST_F(LlamaGeneratorTest, RefusesModelsThatCannotChat) {
  auto no_vocab = LlamaGenerator::load(*dir_ / "no-vocab.gguf");
  ASSERT_FALSE(no_vocab.ok());
  EXPECT_EQ(no_vocab.error().code, ErrorCode::model);
  EXPECT_NE(no_vocab.error().message.find("tokenizer"), std::string::npos);

  auto missing = LlamaGenerator::load(*dir_ / "absent.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);

  auto bad_template = LlamaGenerator::load(*dir_ / "chat.gguf", {.chat_template = "no-such-template"});
  ASSERT_FALSE(bad_template.ok());
  EXPECT_EQ(bad_template.error().code, ErrorCode::invalid_argument);

  auto gemma_format = LlamaGenerator::load(*dir_ / "chat.gguf", {.threads = 1, .chat_template = "gemma"});
  ASSERT_TRUE(gemma_format.ok()) << gemma_format.error().message;
  EXPECT_NE((*gemma_format)->format_chat(kQuestion)->find("<start_of_turn>model"), std::string::npos);
}

}  // namespace
}  // namespace kotae
