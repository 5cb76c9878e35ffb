#include <gtest/gtest.h>

#include "rag/answer_json.h"

namespace kotae::rag {
namespace {

TEST(AnswerJson, SourcesReadBackAsTheyWereWritten) {
  Source s;
  s.number = 7;
  s.chunk_id = 1234567890123;
  s.document = "docs/guide.pdf";
  s.title = "Guide";
  s.page_first = 3;
  s.page_last = 4;
  s.begin = 100;
  s.end = 250;
  s.heading_path = {"Install", "Mirrors"};
  s.text = "Mirrors serve the files. \xC3\xA9t\xC3\xA9";
  s.relevance = 0.123456789012345678;
  s.score = 1.0 / 3;
  const std::vector<Source> sources{s, Source{}};
  auto read = sources_from_json(nlohmann::json::parse(sources_json(sources).dump()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  const Source& r = (*read)[0];
  EXPECT_EQ(r.number, 7);
  EXPECT_EQ(r.chunk_id, s.chunk_id);
  EXPECT_EQ(r.document, s.document);
  EXPECT_EQ(r.title, s.title);
  EXPECT_EQ(r.page_first, 3u);
  EXPECT_EQ(r.page_last, 4u);
  EXPECT_EQ(r.begin, 100u);
  EXPECT_EQ(r.end, 250u);
  EXPECT_EQ(r.heading_path, s.heading_path);
  EXPECT_EQ(r.text, s.text);
  EXPECT_EQ(r.relevance, s.relevance) << "exactly";
  EXPECT_EQ(r.score, s.score);
  EXPECT_EQ(sources_json(*read), sources_json(sources));
}

TEST(AnswerJson, ASourceMissingAFieldOrMistypedIsCorrupt) {
  Source s;
  s.number = 1;
  auto written = sources_json(std::vector<Source>{s});
  for (const char* field : {"number", "chunk_id", "document", "start", "heading_path", "text"}) {
    auto damaged = written;
    damaged[0].erase(field);
    auto read = sources_from_json(damaged);
    ASSERT_FALSE(read.ok()) << field;
    EXPECT_EQ(read.error().code, ErrorCode::corrupt);
    damaged = written;
    damaged[0][field] = nlohmann::json::object();
    EXPECT_FALSE(sources_from_json(damaged).ok()) << field;
  }
  EXPECT_FALSE(sources_from_json(nlohmann::json::object()).ok());
  EXPECT_FALSE(sources_from_json(nlohmann::json::array({1})).ok());
}

}  // namespace
}  // namespace kotae::rag
