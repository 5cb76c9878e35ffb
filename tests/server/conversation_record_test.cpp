// A stored conversation read back into what a follow-up builds on (server/conversation_record), and
// what the conversation endpoints read from requests (server/conversation_request): titles, ids and
// the list's query.

#include <gtest/gtest.h>

#include "rag/answer_json.h"
#include "server/conversation_record.h"
#include "server/conversation_request.h"

namespace kotae::server {
namespace {

rag::Source source(int number, std::string document) {
  rag::Source s;
  s.number = number;
  s.chunk_id = 100 + number;
  s.document = std::move(document);
  s.text = "text of " + s.document;
  return s;
}

rag::Answer answer(std::vector<rag::Source> sources, bool covered = true) {
  rag::Answer a;
  a.text = covered ? "It is in the blue notebook [1]." : "The documents do not cover this.";
  a.covered = covered;
  a.sources = std::move(sources);
  return a;
}

TEST(ConversationRecord, AFollowUpBuildsOnTheCoveredTurnsWithTheSourcesEachFirstShowed) {
  nlohmann::json turns = nlohmann::json::array();
  turns.push_back(turn_json("Where?", answer({source(1, "a.md"), source(2, "b.md")}), 10));
  // Not covered: its sources were numbered from 3 but the pipeline keeps no turn, so 3 comes again.
  turns.push_back(turn_json("What colour?", answer({source(3, "x.md")}, false), 20));
  // A follow-up showing source 2 again and two new ones.
  turns.push_back(turn_json("When?", answer({source(2, "b.md"), source(3, "c.md"), source(4, "d.md")}), 30));
  auto history = conversation_history(turns);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->turns.size(), 2u);
  EXPECT_EQ(history->turns[0].question, "Where?");
  EXPECT_EQ(history->turns[0].answer, "It is in the blue notebook [1].");
  ASSERT_EQ(history->turns[0].sources.size(), 2u);
  EXPECT_EQ(history->turns[0].sources[1].document, "b.md");
  ASSERT_EQ(history->turns[1].sources.size(), 2u) << "source 2 was first shown in the first turn";
  EXPECT_EQ(history->turns[1].sources[0].number, 3);
  EXPECT_EQ(history->turns[1].sources[0].document, "c.md");
  EXPECT_EQ(history->next_source_number(), 5);
  EXPECT_EQ(turns[1]["covered"], false);
  EXPECT_EQ(turns[2]["created_at"], 30);
}

TEST(ConversationRecord, DamagedTurnsAreCorruptNotGuessed) {
  const auto ok_turn = turn_json("Where?", answer({source(1, "a.md")}), 10);
  for (const auto& damaged : {nlohmann::json::object(), nlohmann::json("turns"), nlohmann::json::array({1}),
                              nlohmann::json::array({nlohmann::json::object({{"question", "q"}})})}) {
    auto history = conversation_history(damaged);
    ASSERT_FALSE(history.ok()) << damaged.dump();
    EXPECT_EQ(history.error().code, ErrorCode::corrupt);
  }
  auto bad_source = nlohmann::json::array({ok_turn});
  bad_source[0]["sources"][0]["number"] = "one";
  EXPECT_FALSE(conversation_history(bad_source).ok());
  EXPECT_TRUE(conversation_history(nlohmann::json::array({ok_turn})).ok());
}

TEST(ConversationRecord, SummariesAndConversationsAsTheApiShowsThem) {
  ConversationRecord record{{"conv_1", "faq", "Where?", 10.5, 20.25, 1},
                            nlohmann::json::array({{{"question", "Where?"}}})};
  const auto summary = summary_json(record.summary);
  EXPECT_EQ(summary, nlohmann::json({{"id", "conv_1"},
                                     {"object", "conversation"},
                                     {"collection", "faq"},
                                     {"title", "Where?"},
                                     {"created_at", 10.5},
                                     {"updated_at", 20.25},
                                     {"turns", 1}}));
  EXPECT_EQ(conversation_json(record)["turns"], record.turns);
}

TEST(ConversationRequest, ATitleIsTheQuestionCutAtACharactersBoundary) {
  EXPECT_EQ(title_of_question("  Where is\nthe notebook?\t "), "Where is the notebook?");
  const std::string e_acute = "\xC3\xA9";  // two bytes
  std::string long_question;
  for (int i = 0; i < 250; ++i) long_question += e_acute;
  const std::string title = title_of_question(long_question);
  EXPECT_EQ(title.size(), 400u) << "200 characters of two bytes each";
  EXPECT_EQ(title.substr(398), e_acute);
  EXPECT_EQ(title_of_question(std::string(199, 'a') + " bcd"), std::string(199, 'a')) << "no space left at the end";
  EXPECT_EQ(title_of_question("\x01\x02"), "untitled");
}

TEST(ConversationRequest, ARenameTakesOneTo200CharactersAfterTrimming) {
  EXPECT_EQ(read_conversation_title({{"title", "  Upgrades\tand\nmirrors "}}), "Upgrades and mirrors");
  std::string two_hundred;
  for (int i = 0; i < 200; ++i) two_hundred += "\xC3\xA9";
  EXPECT_EQ(read_conversation_title({{"title", two_hundred}}), two_hundred);
  auto refused = [](const nlohmann::json& body) {
    try {
      read_conversation_title(body);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      return e.message;
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused({{"title", "   \n "}}).find("empty"), std::string::npos);
  EXPECT_NE(refused({{"title", two_hundred + "x"}}).find("at most 200 characters"), std::string::npos);
  EXPECT_NE(refused({{"title", 7}}).find("'title'"), std::string::npos);
  EXPECT_NE(refused(nlohmann::json::object()).find("'title'"), std::string::npos);
}

TEST(ConversationRequest, IdsOfAnotherFormAre404BeforeAnyStore) {
  const std::string good = "conv_0123456789abcdef0123456789abcdef";
  EXPECT_EQ(conversation_id(good), good);
  const std::vector<std::string> malformed{"",
                                           "conv_",
                                           "conv_nope",
                                           "conv_0123456789ABCDEF0123456789abcdef",
                                           good + "0",
                                           "job_0123456789abcdef0123456789abcdef",
                                           "conv_0123456789abcdef0123456789abcde/"};
  for (const std::string& bad : malformed) {
    try {
      conversation_id(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 404) << bad;
      EXPECT_EQ(e.message, "no such conversation (an id is 'conv_' and 32 hex digits)") << "the id is not quoted";
    }
  }
}

TEST(ConversationRequest, TheListTakesACollectionAndALimitFrom1To1000) {
  HttpRequest request;
  auto query = read_conversation_list_query(request);
  EXPECT_EQ(query.limit, 100u);
  EXPECT_EQ(query.collection, "");
  request.query = {{"collection", "faq"}, {"limit", "1000"}};
  query = read_conversation_list_query(request);
  EXPECT_EQ(query.limit, 1000u);
  EXPECT_EQ(query.collection, "faq");
  for (const std::string bad : {"0", "1001", "-1", "ten", "", "5x", "99999999999999999999999"}) {
    request.query = {{"limit", bad}};
    try {
      read_conversation_list_query(request);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.message, "'limit' must be an integer from 1 to 1000");
    }
  }
}

}  // namespace
}  // namespace kotae::server
