#include <gtest/gtest.h>

#include "rag/citations.h"

namespace kotae::rag {
namespace {

Source source(int number, std::string document, std::size_t begin, std::string text) {
  Source s;
  s.number = number;
  s.chunk_id = 100 + number;
  s.document = std::move(document);
  s.title = "Title " + std::to_string(number);
  s.page_first = s.page_last = static_cast<std::uint32_t>(number);
  s.begin = begin;
  s.end = begin + text.size();
  s.text = std::move(text);
  return s;
}

const std::vector<Source> kSources = {
    source(1, "apt.md", 40, "APT is the package manager. It resolves dependencies for you. Mirrors serve the files."),
    source(2, "dpkg.md", 0, "dpkg installs single .deb files.\nIt does not fetch dependencies."),
};

TEST(Citations, MapMarkersToSourcesAndDropThoseThatNameNone) {
  const CitedAnswer cited = resolve_citations(
      "APT resolves dependencies [1]. dpkg does not fetch them [2][7]. Snaps are elsewhere [9].", kSources);
  EXPECT_EQ(cited.text, "APT resolves dependencies [1]. dpkg does not fetch them [2]. Snaps are elsewhere.");
  EXPECT_EQ(cited.removed_markers, 2u);
  ASSERT_EQ(cited.citations.size(), 2u);
  for (const auto& c : cited.citations) {
    EXPECT_EQ(cited.text.substr(c.answer_start, c.answer_end - c.answer_start), citation_marker(c.number));
  }
  EXPECT_EQ(cited.citations[0].chunk_id, 101);
  EXPECT_EQ(cited.citations[0].document, "apt.md");
  EXPECT_EQ(cited.citations[0].page, 1u);
  EXPECT_EQ(cited.citations[1].document, "dpkg.md");
}

TEST(Citations, PointAtTheSentenceOfTheSourceThatBacksTheClaim) {
  const CitedAnswer cited =
      resolve_citations("It works out the dependencies for you [1]. Use dpkg for a .deb file [2].", kSources);
  ASSERT_EQ(cited.citations.size(), 2u);
  const Citation& apt = cited.citations[0];
  EXPECT_EQ(apt.text, "It resolves dependencies for you.");
  // Bytes of the document: the chunk starts at 40 in its document, the sentence 28 bytes into the chunk.
  EXPECT_EQ(apt.start, 40u + 28u);
  EXPECT_EQ(apt.end, apt.start + apt.text.size());
  EXPECT_EQ(kSources[0].text.substr(apt.start - 40, apt.end - apt.start), apt.text);
  EXPECT_EQ(cited.citations[1].text, "dpkg installs single .deb files.");
}

TEST(Citations, ATableRowIsCitedWholeUnderItsHeaderAtItsBytesInTheDocument) {
  // A piece of a table: the header repeated before the rows the chunk spans, which start at byte 500.
  const std::string header = "| Fruit | Price |\n| --- | --- |";
  const std::string rows = "| Pear | 2 |\n| Plum | 3. Ripe in May. |";
  Source piece = source(1, "fruit.csv", 500, header + "\n" + rows);
  piece.end = 500 + rows.size();
  const CitedAnswer cited = resolve_citations("Plums are ripe in May [1].", std::vector<Source>{piece});
  ASSERT_EQ(cited.citations.size(), 1u);
  const Citation& plum = cited.citations[0];
  EXPECT_EQ(plum.text, "| Plum | 3. Ripe in May. |");
  EXPECT_EQ(plum.table_header, header);
  EXPECT_EQ(plum.start, 500 + rows.find("| Plum"));
  EXPECT_EQ(plum.end, 500 + rows.size());

  // The whole piece, when nothing matches: its span, without the repeated header.
  const CitedAnswer whole = resolve_citations("Zebras [1].", std::vector<Source>{piece});
  ASSERT_EQ(whole.citations.size(), 1u);
  EXPECT_EQ(whole.citations[0].start, 500u);
  EXPECT_EQ(whole.citations[0].end, piece.end);
  EXPECT_TRUE(whole.citations[0].table_header.empty());

  // The header's own lines are no row.
  EXPECT_FALSE(table_row_at(piece.text, 2));
  EXPECT_FALSE(table_row_at(piece.text, header.size() - 2));
  EXPECT_TRUE(table_row_at(piece.text, header.size() + 3));
  EXPECT_FALSE(table_row_at("plain | text", 3));
}

TEST(Citations, OcrdTextIsCitedWithTheBoxesOfItsLines) {
  // Three OCR'd lines of a page; the cited sentence is the second line (sentences end at line breaks).
  const std::string text = "Scanned heading\nThe keeper counts quokkas every\nmorning at six.";
  Source scan = source(1, "scan.png", 100, text);
  const std::size_t second = text.find("The keeper"), third = text.find("morning");
  scan.boxes = {{100, 100 + 15, 1, 0.1f, 0.05f, 0.5f, 0.08f},
                {100 + second, 100 + third - 1, 1, 0.1f, 0.10f, 0.9f, 0.13f},
                {100 + third, 100 + text.size(), 1, 0.1f, 0.14f, 0.4f, 0.17f}};
  const CitedAnswer cited = resolve_citations("Quokkas are counted every morning [1].", std::vector<Source>{scan});
  ASSERT_EQ(cited.citations.size(), 1u);
  const Citation& c = cited.citations[0];
  EXPECT_EQ(c.text, "The keeper counts quokkas every");
  ASSERT_EQ(c.boxes.size(), 1u);
  EXPECT_FLOAT_EQ(c.boxes[0].top, 0.10f);
  // The whole chunk, when nothing matches: every line's box.
  EXPECT_EQ(resolve_citations("Zebras [1].", std::vector<Source>{scan}).citations[0].boxes.size(), 3u);
}

TEST(Citations, UnderstandListsOfNumbersAndCiteTheWholeChunkWhenNoSentenceMatches) {
  const CitedAnswer cited = resolve_citations("Zebras [1, 2] and [2,1].", kSources);
  EXPECT_EQ(cited.text, "Zebras [1][2] and [2][1].");
  ASSERT_EQ(cited.citations.size(), 4u);
  EXPECT_EQ(cited.citations[0].text, kSources[0].text);  // nothing shared with "Zebras": the whole chunk
  EXPECT_EQ(cited.citations[0].start, kSources[0].begin);
  EXPECT_EQ(cited.citations[0].end, kSources[0].end);
  // Brackets that are not markers stay as they are.
  EXPECT_EQ(resolve_citations("an array a[i] and [see above]", kSources).text, "an array a[i] and [see above]");
}

TEST(Citations, SplitSentencesAtTheirEndsAndAtLineBreaks) {
  const std::string text = "Dr. Smith wrote it. Is it stable?  Yes!\nA new line";
  std::vector<std::string> sentences;
  for (const auto& [b, e] : split_sentences(text)) sentences.push_back(text.substr(b, e - b));
  EXPECT_EQ(sentences, (std::vector<std::string>{"Dr. Smith wrote it.", "Is it stable?", "Yes!", "A new line"}));
}

}  // namespace
}  // namespace kotae::rag
