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

  const CitedAnswer answer = extract_answer("What does APT do?", question, sources, sentences, {.max_sentences = 3});
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

TEST(ExtractiveAnswerer, TableRowsAnswerWholeUnderTheirHeaderShownOnce) {
  Source t;
  t.number = 1, t.chunk_id = 10, t.document = "ships.csv", t.begin = 40;
  const std::string header = "| Ship | Tonnage | Home port |\n| --- | --- | --- |";
  const std::string rows = "| Aurora | 1200 | Bergen |\n| Borealis | 3400. Refitted. | Troms |";
  t.text = header + "\n" + rows;  // a piece of the table: the header is repeated, not in its span
  t.end = t.begin + rows.size();
  const std::vector<std::vector<store::SentenceVector>> sentences = {
      {sentence("| Ship | Tonnage | Home port |", t.text, at(0.99f, 1)),  // the header: never an answer
       sentence("| --- | --- | --- |", t.text, at(0.5f, 1)),
       sentence("| Aurora | 1200 | Bergen |", t.text, at(0.9f, 2)),
       sentence("| Borealis | 3400.", t.text, at(0.95f, 3)),  // a row is cut at its sentence ends
       sentence("Refitted. | Troms |", t.text, at(0.96f, 1))}};
  const std::vector<float> question = {1, 0, 0, 0};
  const CitedAnswer answer =
      extract_answer("Which ships are there?", question, std::vector<Source>{t}, sentences, {.max_sentences = 3});
  EXPECT_EQ(answer.text, header + "\n| Aurora | 1200 | Bergen [1] |\n| Borealis | 3400. Refitted. | Troms [1] |");
  ASSERT_EQ(answer.citations.size(), 2u);
  EXPECT_EQ(answer.citations[1].text, "| Borealis | 3400. Refitted. | Troms |");
  EXPECT_EQ(answer.citations[1].table_header, header);
  EXPECT_EQ(answer.citations[1].start, 40 + rows.find("| Borealis"));
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
  const CitedAnswer answer = extract_answer("A question?", question, sources, sentences);
  EXPECT_EQ(answer.text, "A strong match for the question. [3]");
  EXPECT_TRUE(extract_answer("A question?", question, {}, {}).citations.empty());
}

// One source whose sentences are `texts` (in this order, spaces or line breaks between them as in
// `whole`), with similarities `cosines` to the question.
struct OneSource {
  std::vector<Source> sources;
  std::vector<std::vector<store::SentenceVector>> sentences;
  OneSource(std::string whole, const std::vector<std::string>& texts, const std::vector<float>& cosines) {
    Source s;
    s.number = 1, s.chunk_id = 1, s.document = "doc.pdf", s.text = std::move(whole);
    s.end = s.text.size();
    sources.push_back(s);
    sentences.emplace_back();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      sentences[0].push_back(sentence(texts[i], sources[0].text, at(cosines[i], static_cast<int>(1 + i % 3))));
    }
  }
  std::string answer(std::string_view question, std::size_t max_sentences = 3) const {
    const std::vector<float> axis = {1, 0, 0, 0};
    return extract_answer(question, axis, sources, sentences, {.max_sentences = max_sentences}).text;
  }
};

// The chunk's sentences as a line-based splitter left them: the fragment is joined with its head.
TEST(ExtractiveAnswerer, AFragmentIsJoinedWithTheSentenceItWasCutFromOrLeftOut) {
  const OneSource websites(
      "SQLite works great as the database engine for most low to medium traffic websites\n"
      "(which is to say, most websites). Unrelated words about cats and dogs.",
      {"SQLite works great as the database engine for most low to medium traffic websites",
       "(which is to say, most websites).", "Unrelated words about cats and dogs."},
      {0.5f, 0.95f, 0.1f});
  EXPECT_EQ(websites.answer("Can SQLite be used as the database of a website?"),
            "SQLite works great as the database engine for most low to medium traffic websites (which is to say, "
            "most websites). [1]");
  // A chunk that starts inside a sentence has no head for its first fragment.
  const OneSource cut("which is why it fails. However, the fix is simple. Restart the daemon now.",
                      {"which is why it fails.", "However, the fix is simple.", "Restart the daemon now."},
                      {0.99f, 0.9f, 0.85f});
  EXPECT_EQ(cut.answer("Why does it fail?"), "Restart the daemon now. [1]");
}

// Asked how to report a bug, the pointer to another section and the restated question are no answer.
TEST(ExtractiveAnswerer, SentencesThatPointElsewhereOrRestateTheQuestionAreNotAnswers) {
  const OneSource faq(
      "See section 12.5 for reporting bugs. This is how you report bugs in Debian. You can use the "
      "package reportbug that will guide you through the reporting process.",
      {"See section 12.5 for reporting bugs.", "This is how you report bugs in Debian.",
       "You can use the package reportbug that will guide you through the reporting process."},
      {0.95f, 0.93f, 0.9f});
  EXPECT_EQ(faq.answer("How do I report a bug in Debian?"),
            "You can use the package reportbug that will guide you through the reporting process. [1]");
}

// The best sentence leans on the one before it; the answer has both, one citation for both.
TEST(ExtractiveAnswerer, ASentenceOnAPronounBringsItsAntecedent) {
  const OneSource apt("APT is Debian's package manager. It installs packages from mirrors.\n\nCats sleep a lot.",
                      {"APT is Debian's package manager.", "It installs packages from mirrors.", "Cats sleep a lot."},
                      {0.5f, 0.95f, 0.1f});
  const std::vector<float> axis = {1, 0, 0, 0};
  const CitedAnswer answer = extract_answer("Where does it get packages?", axis, apt.sources, apt.sentences);
  EXPECT_EQ(answer.text, "APT is Debian's package manager. It installs packages from mirrors. [1]");
  ASSERT_EQ(answer.citations.size(), 1u);
  EXPECT_EQ(answer.citations[0].text, "APT is Debian's package manager. It installs packages from mirrors.");
  // Not the first sentence of the answer either; and an antecedent already in the answer is not repeated.
  const OneSource bugs(
      "Expect an acknowledgement. You can use reportbug to file bugs. It also lists known bugs.",
      {"Expect an acknowledgement.", "You can use reportbug to file bugs.", "It also lists known bugs."},
      {0.9f, 0.3f, 0.85f});
  EXPECT_EQ(bugs.answer("Which bugs are known?"),
            "Expect an acknowledgement. [1] You can use reportbug to file bugs. It also lists known bugs. [1]");
  const OneSource adjacent("You can use reportbug to file bugs. It also lists known bugs.",
                           {"You can use reportbug to file bugs.", "It also lists known bugs."}, {0.9f, 0.85f});
  EXPECT_EQ(adjacent.answer("Which bugs are known?"),
            "You can use reportbug to file bugs. [1] It also lists known bugs. [1]");
}

}  // namespace
}  // namespace kotae::rag
