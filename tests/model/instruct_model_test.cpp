// The local generator on a real instruction-tuned model, SmolLM2-135M-Instruct (scripts/setup installs
// it): its own ChatML template from the GGUF's metadata, answers that make sense, and questions asked
// at once answered side by side as right as one alone.

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "model/llama_generator.h"
#include "support/test_data.h"

namespace kotae {
namespace {

constexpr const char* kInstructModel = "smollm2-135m-instruct";

std::unique_ptr<LlamaGenerator> load_instruct(int parallel) {
  auto generator = LlamaGenerator::load(testing::model_dir(kInstructModel) / "model.gguf",
                                        {.context_length = 1024, .parallel = parallel, .threads = 2});
  EXPECT_TRUE(generator.ok()) << generator.error().message << " (scripts/setup installs " << kInstructModel << ")";
  return generator ? std::move(*generator) : nullptr;
}

std::vector<ChatMessage> capital_of(const std::string& country) {
  return {{"system", "You are a helpful assistant. Answer in one short sentence."},
          {"user", "What is the capital of " + country + "?"}};
}

TEST(InstructModel, AnswersThroughItsOwnChatTemplate) {
  auto generator = load_instruct(1);
  ASSERT_TRUE(generator);
  const auto prompt = generator->format_chat(capital_of("France"));
  ASSERT_TRUE(prompt.ok());
  EXPECT_NE(prompt->find("<|im_start|>user\nWhat is the capital of France?<|im_end|>"), std::string::npos) << *prompt;
  EXPECT_TRUE(prompt->ends_with("<|im_start|>assistant\n")) << *prompt;
  std::string streamed;
  auto answer =
      generator->generate(capital_of("France"), {.max_tokens = 32, .temperature = 0.0f}, [&](std::string_view piece) {
        streamed += piece;
        return true;
      });
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_NE(answer->text.find("Paris"), std::string::npos) << answer->text;
  EXPECT_EQ(streamed, answer->text);
  EXPECT_EQ(answer->stats.finish_reason, "stop") << "the model ends its turn itself";
}

TEST(InstructModel, QuestionsAskedAtOnceAreEachAnsweredRight) {
  auto generator = load_instruct(4);
  ASSERT_TRUE(generator);
  const std::vector<std::pair<std::string, std::string>> asked = {
      {"France", "Paris"}, {"Germany", "Berlin"}, {"Italy", "Rome"}, {"Japan", "Tokyo"}};
  std::mutex mutex;
  std::condition_variable all_done;
  std::vector<std::optional<Result<Generation>>> answers(asked.size());
  std::size_t done = 0;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    generator->start(capital_of(asked[i].first), {.max_tokens = 32, .temperature = 0.0f}, {},
                     [&, i](Result<Generation> g) {
                       std::lock_guard lock(mutex);
                       answers[i].emplace(std::move(g));
                       if (++done == asked.size()) all_done.notify_one();
                     });
  }
  std::unique_lock lock(mutex);
  all_done.wait(lock, [&] { return done == asked.size(); });
  for (std::size_t i = 0; i < asked.size(); ++i) {
    ASSERT_TRUE(answers[i]->ok()) << answers[i]->error().message;
    EXPECT_NE((*answers[i])->text.find(asked[i].second), std::string::npos)
        << asked[i].first << ": " << (*answers[i])->text;
  }
}

}  // namespace
}  // namespace kotae
