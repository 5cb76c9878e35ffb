// The local generator's slots (model/llama_scheduler.h) on a tiny random GGUF: requests answered side by
// side, a follow-up finding its prefix after other conversations ran, owners kept apart, a full queue
// refused at once, a request nobody wants any more given up.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>

#include "model/llama_generator.h"
#include "support/tiny_gguf.h"

namespace kotae {
namespace {

class LlamaSchedulerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("kotae-scheduler-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*dir_);
    ASSERT_TRUE(testing::write_tiny_llama_gguf(*dir_ / "chat.gguf", {.context = 512, .with_tokenizer = true}));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::unique_ptr<LlamaGenerator> load(LlamaGeneratorOptions options) {
    options.threads = 2;
    auto generator = LlamaGenerator::load(*dir_ / "chat.gguf", options);
    EXPECT_TRUE(generator.ok()) << generator.error().message;
    return generator ? std::move(*generator) : nullptr;
  }
  static inline std::filesystem::path* dir_ = nullptr;
};

// Answers as they come: which finished first, and each one's result.
struct Finished {
  std::mutex mutex;
  std::vector<std::string> order;
  std::map<std::string, Result<Generation>> results;
  std::promise<void> all;
  std::size_t expected = 0;

  GenerationDone done(std::string name) {
    return [this, name](Result<Generation> result) {
      std::lock_guard lock(mutex);
      order.push_back(name);
      results.emplace(name, std::move(result));
      if (order.size() == expected) all.set_value();
    };
  }
};

const std::vector<ChatMessage> kAboutApt = {{"system", "Answer from the sources."},
                                            {"user", "What is apt, and how is it used?"}};
const std::vector<ChatMessage> kAboutBoot = {{"system", "Say it in one line."},
                                             {"user", "Why does the machine not boot?"}};

TEST_F(LlamaSchedulerTest, TwoRequestsAreAnsweredSideBySide) {
  auto generator = load({.context_length = 512, .parallel = 2});
  ASSERT_TRUE(generator);
  EXPECT_EQ(generator->slots(), 2);
  EXPECT_EQ(generator->context_tokens(), 512u);  // each slot its own
  Finished finished;
  finished.expected = 2;
  // One at a time, the short answer would wait for the long one; side by side it ends first.
  generator->start(kAboutApt, {.max_tokens = 400, .temperature = 0.0f, .ignore_end_of_turn = true}, {},
                   finished.done("long"));
  generator->start(kAboutBoot, {.max_tokens = 8, .temperature = 0.0f, .ignore_end_of_turn = true}, {},
                   finished.done("short"));
  finished.all.get_future().get();
  EXPECT_EQ(finished.order, (std::vector<std::string>{"short", "long"}));
  for (auto& [name, result] : finished.results) {
    ASSERT_TRUE(result.ok()) << name << ": " << result.error().message;
    EXPECT_EQ(result->stats.finish_reason, "length") << name;
  }
  EXPECT_EQ(finished.results.at("long")->stats.generated_tokens, 400u);
  EXPECT_EQ(finished.results.at("short")->stats.generated_tokens, 8u);
}

TEST_F(LlamaSchedulerTest, AFollowUpFindsItsPrefixAfterAnotherConversationRan) {
  const GenerationOptions greedy{.max_tokens = 8, .temperature = 0.0f};
  auto follow_up_reuse = [&](int parallel) {
    auto generator = load({.context_length = 512, .parallel = parallel});
    auto first = generator->generate(kAboutApt, greedy);
    EXPECT_TRUE(first.ok());
    EXPECT_TRUE(generator->generate(kAboutBoot, greedy).ok());  // another conversation in between
    std::vector<ChatMessage> follow_up = kAboutApt;
    follow_up.push_back({"assistant", first->text});
    follow_up.push_back({"user", "And dpkg?"});
    auto second = generator->generate(follow_up, greedy);
    EXPECT_TRUE(second.ok());
    return std::pair(second->stats.reused_prompt_tokens, first->stats.prompt_tokens);
  };
  const auto [reused, first_prompt] = follow_up_reuse(2);
  EXPECT_GE(reused, first_prompt - 4);  // the assistant header may tokenise differently
  // With one slot the other conversation took it: only the chat template's opening is shared.
  const auto [reused_one_slot, unused] = follow_up_reuse(1);
  EXPECT_LT(reused_one_slot, first_prompt / 2);
}

TEST_F(LlamaSchedulerTest, AnotherOwnersCacheIsNeverReused) {
  auto generator = load({.context_length = 512, .parallel = 2});
  ASSERT_TRUE(generator);
  GenerationOptions options{.max_tokens = 4, .temperature = 0.0f};
  options.cache_owner = "alpha";
  ASSERT_TRUE(generator->generate(kAboutApt, options).ok());
  options.cache_owner = "beta";
  auto beta = generator->generate(kAboutApt, options);  // token for token alpha's prompt
  ASSERT_TRUE(beta.ok());
  EXPECT_EQ(beta->stats.reused_prompt_tokens, 0u);
  options.cache_owner = "alpha";
  auto alpha = generator->generate(kAboutApt, options);
  ASSERT_TRUE(alpha.ok());
  EXPECT_EQ(alpha->stats.reused_prompt_tokens,
            alpha->stats.prompt_tokens - 1);  // all but the token that starts the answer
}

TEST_F(LlamaSchedulerTest, AFullQueueIsRefusedAtOnce) {
  auto generator = load({.context_length = 512, .parallel = 1, .max_queued = 1});
  ASSERT_TRUE(generator);
  std::promise<void> started, release;
  auto released = release.get_future().share();
  std::atomic<bool> first_piece = true;
  Finished finished;
  finished.expected = 2;
  const GenerationOptions long_answer{.max_tokens = 50, .temperature = 0.0f, .ignore_end_of_turn = true};
  // The one slot is held (its callback waits on the scheduler's thread), one request waits for it...
  generator->start(
      kAboutApt, long_answer,
      [&](std::string_view) {
        if (first_piece.exchange(false)) {
          started.set_value();
          released.wait();
        }
        return true;
      },
      finished.done("running"));
  started.get_future().wait();
  generator->start(kAboutBoot, long_answer, {}, finished.done("waiting"));
  // ...so the next is refused at once, as overloaded.
  auto refused = generator->generate(kAboutBoot, long_answer);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::overloaded);
  EXPECT_NE(refused.error().message.find("retry"), std::string::npos) << refused.error().message;
  release.set_value();
  finished.all.get_future().get();
  EXPECT_EQ(finished.order, (std::vector<std::string>{"running", "waiting"}));
  for (auto& [name, result] : finished.results) EXPECT_TRUE(result.ok()) << name;
}

TEST_F(LlamaSchedulerTest, ARequestNobodyWantsIsGivenUpAndFreesItsSlot) {
  auto generator = load({.context_length = 512, .parallel = 1});
  ASSERT_TRUE(generator);
  GenerationOptions abandoned{.max_tokens = 400, .temperature = 0.0f, .ignore_end_of_turn = true};
  abandoned.wanted = [] { return false; };  // its client went away
  auto given_up = generator->generate(kAboutApt, abandoned);
  ASSERT_TRUE(given_up.ok());
  EXPECT_EQ(given_up->stats.finish_reason, "cancelled");
  EXPECT_LT(given_up->stats.generated_tokens, 400u);
  auto next = generator->generate(kAboutBoot, {.max_tokens = 4, .temperature = 0.0f, .ignore_end_of_turn = true});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->stats.generated_tokens, 4u);
}

}  // namespace
}  // namespace kotae
