#include <gtest/gtest.h>

#include <cmath>

#include "rag/extractive_answerer.h"

namespace kotae::rag {
namespace {

// A unit vector in 4 dimensions with cosine `c` to the question's axis, the rest along `other`.
std::vector<float> at(float c, int other) {
  std::vector<float> v(4, 0.0f);
  v[0] = c;
  v[static_cast<std::size_t>(other)] = std::sqrt(1 - c * c);
  return v;
}

store::SentenceVector sentence(const std::string& text, std::string_view whole, std::vector<float> v) {
  const auto begin = static_cast<std::uint32_t>(whole.find(text));
  return {begin, static_cast<std::uint32_t>(begin + text.size()), std::move(v)};
}

TEST(ExtractiveAnswerer, PicksRelevantSentencesWithoutRepeatsInReadingOrderEachCited) {
  Source a;
  a.number = 1, a.chunk_id = 10, a.document = "a.md", a.begin = 100;
  a.text = "Intro words here. APT installs packages from mirrors. What is APT? It also upgrades the system.";
  Source b;
  b.number = 2, b.chunk_id = 20, b.document = "b.md", b.begin = 0;
  b.text = "APT installs packages from mirrors. Unrelated trivia about cats.";
  a.end = a.begin + a.text.size();
  b.end = b.text.size();
  const std::vector<Source> sources = {a, b};
  const std::vector<std::vector<store::SentenceVector>> sentences = {
      {sentence("Intro words here.", a.text, at(0.1f, 1)),
       sentence("APT installs packages from mirrors.", a.text, at(0.95f, 1)),
       sentence("What is APT?", a.text, at(0.99f, 1)),  // a question: never an answer
       sentence("It also upgrades the system.", a.text, at(0.85f, 2))},
      {sentence("APT installs packages from mirrors.", b.text, at(0.94f, 1)),  // the same words again
       sentence("Unrelated trivia about cats.", b.text, at(0.2f, 3))}};
  const std::vector<float> question = {1, 0, 0, 0};

  const CitedAnswer answer = extract_answer(question, sources, sentences, {.max_sentences = 3});
  EXPECT_EQ(answer.text, "APT installs packages from mirrors. [1] It also upgrades the system. [1]");
  ASSERT_EQ(answer.citations.size(), 2u);
  EXPECT_EQ(answer.citations[0].text, "APT installs packages from mirrors.");
  EXPECT_EQ(answer.citations[0].start, 100 + a.text.find("APT installs"));
  EXPECT_EQ(answer.citations[0].end, answer.citations[0].start + answer.citations[0].text.size());
  EXPECT_EQ(answer.citations[1].text, "It also upgrades the system.");
  for (const auto& c : answer.citations) {
    EXPECT_EQ(answer.text.substr(c.answer_start, c.answer_end - c.answer_start), "[1]");
  }
}

TEST(ExtractiveAnswerer, LeavesOutSentencesFarBelowTheBestAndAnswersNothingFromNothing) {
  Source a;
  a.number = 3, a.document = "a.md";
  a.text = "A strong match for the question. A weak one that shares little.";
  const std::vector<Source> sources = {a};
  const std::vector<std::vector<store::SentenceVector>> sentences = {
      {sentence("A strong match for the question.", a.text, at(0.9f, 1)),
       sentence("A weak one that shares little.", a.text, at(0.3f, 2))}};
  const std::vector<float> question = {1, 0, 0, 0};
  const CitedAnswer answer = extract_answer(question, sources, sentences);
  EXPECT_EQ(answer.text, "A strong match for the question. [3]");
  EXPECT_TRUE(extract_answer(question, {}, {}).citations.empty());
}

}  // namespace
}  // namespace kotae::rag
