#include "text/chunker.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_data.h"
#include "text/loaders/document_builder.h"
#include "text/text_boundaries.h"

namespace kotae::text {
namespace {

constexpr const char* kDebianFaq = "/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz";

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t';
}

// One short word per token: "river stone ... ." has exactly `tokens` tokens.
std::string sentence(std::size_t tokens, std::size_t seed = 0) {
  static const char* const kWords[] = {"river", "stone", "light", "water", "house",
                                       "green", "music", "table", "cloud", "apple"};
  std::string out;
  for (std::size_t i = 0; i + 1 < tokens; ++i) {
    if (!out.empty()) out += ' ';
    out += kWords[(i + seed) % std::size(kWords)];
  }
  return out + ".";
}

struct Paragraph {
  std::string text;
  std::uint32_t page = 0;
  std::vector<std::string> heading_path;
};

TextSegment segment(std::size_t begin, std::size_t end, std::uint32_t page, std::vector<std::string> heading_path) {
  TextSegment s;
  s.begin = begin;
  s.end = end;
  s.page = page;
  s.heading_path = std::move(heading_path);
  return s;
}

// What a loader would produce: paragraphs joined by one blank line, one segment each.
Document make_document(const std::vector<Paragraph>& paragraphs) {
  Document document;
  for (const Paragraph& p : paragraphs) {
    if (!document.text.empty()) document.text += "\n\n";
    const std::size_t begin = document.text.size();
    document.text += p.text;
    document.segments.push_back(segment(begin, document.text.size(), p.page, p.heading_path));
    document.pages = std::max(document.pages, p.page);
  }
  return document;
}

Document make_document(const std::vector<std::string>& paragraphs) {
  std::vector<Paragraph> with_metadata;
  for (const std::string& text : paragraphs) with_metadata.push_back({text, 0, {}});
  return make_document(with_metadata);
}

std::string read_gzip(const std::string& path) {
  std::string text;
  FILE* pipe = ::popen(("gzip -dc " + path).c_str(), "r");
  if (pipe == nullptr) return text;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  ::pclose(pipe);
  return text;
}

// The Debian FAQ as a loader would normalise it: paragraphs (blank-line separated) with runs of
// spaces (and no-break spaces) collapsed, lines either kept (hard-wrapped, as in the file) or joined; chapters and
// numbered questions become heading paths; a new "page" every 20 paragraphs.
Document faq_document(const std::string& raw, bool keep_line_breaks) {
  static const std::regex kChapter(R"(^Chapter \d+\. .*)");
  static const std::regex kQuestion(R"(^(\d+(\.\d+)+)\. .*)");
  std::vector<Paragraph> paragraphs;
  std::vector<std::string> headings;
  std::string current;
  bool current_is_heading = false;
  const auto flush = [&] {
    if (current.empty()) return;
    const std::uint32_t page = static_cast<std::uint32_t>(1 + paragraphs.size() / 20);
    paragraphs.push_back({current, page, headings});
    current.clear();
    current_is_heading = false;
  };
  std::istringstream lines(std::regex_replace(raw, std::regex("\u00A0"), " "));  // no-break spaces, as a loader would
  for (std::string line; std::getline(lines, line);) {
    std::string collapsed;
    for (char c : line) {
      if (is_space(c) && (collapsed.empty() || collapsed.back() == ' ')) continue;
      collapsed += is_space(c) ? ' ' : c;
    }
    while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
    if (collapsed.empty()) {
      flush();
      continue;
    }
    if (current.empty() && !line.empty() && !is_space(line[0])) {
      std::smatch match;
      if (std::regex_match(collapsed, kChapter)) {
        headings = {collapsed};
        current_is_heading = true;
      } else if (std::regex_match(collapsed, match, kQuestion) && !headings.empty()) {
        const auto depth = static_cast<std::size_t>(std::count(match[1].first, match[1].second, '.')) + 1;
        headings.resize(std::min(headings.size(), depth - 1));
        headings.push_back(collapsed);
        current_is_heading = true;
      }
    }
    if (!current.empty()) current += (keep_line_breaks && !current_is_heading) ? '\n' : ' ';
    current += collapsed;
  }
  flush();
  return make_document(paragraphs);
}

class ChunkerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = WordPieceTokenizer::from_tokenizer_json(testing::model_dir("all-minilm-l6-v2") / "tokenizer.json");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    tokenizer_ = new WordPieceTokenizer(std::move(*loaded));
  }
  static void TearDownTestSuite() { delete tokenizer_; }

  static std::vector<Chunk> chunk(const Document& document, std::size_t max_tokens, std::size_t overlap_tokens) {
    auto chunks = chunk_document(document, *tokenizer_, {max_tokens, overlap_tokens});
    EXPECT_TRUE(chunks.ok()) << chunks.error().message;
    return chunks.ok() ? std::move(*chunks) : std::vector<Chunk>{};
  }
  static std::string text_of(const Document& document, const Chunk& c) {
    return document.text.substr(c.begin, c.end - c.begin);
  }
  static std::size_t count(std::string_view text) { return tokenizer_->tokenize(text).size(); }

  // Tokens of the whitespace-delimited word around byte `at`.
  static std::size_t tokens_in_word_at(const std::string& text, std::size_t at) {
    std::size_t begin = at, end = at;
    while (begin > 0 && !is_space(text[begin - 1])) --begin;
    while (end < text.size() && !is_space(text[end])) ++end;
    return count(std::string_view(text).substr(begin, end - begin));
  }

  static void expect_chunker_properties(const Document& document, const ChunkerOptions& options);

  static WordPieceTokenizer* tokenizer_;
};
WordPieceTokenizer* ChunkerTest::tokenizer_ = nullptr;

void ChunkerTest::expect_chunker_properties(const Document& document, const ChunkerOptions& options) {
  SCOPED_TRACE("max_tokens " + std::to_string(options.max_tokens) + ", overlap_tokens " +
               std::to_string(options.overlap_tokens));
  const std::string& text = document.text;
  const std::vector<Chunk> chunks = chunk(document, options.max_tokens, options.overlap_tokens);
  ASSERT_FALSE(chunks.empty());
  const Encoding tokens = tokenizer_->tokenize(text);

  std::vector<bool> covered(text.size(), false);
  std::size_t at_least_half_full = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    SCOPED_TRACE("chunk " + std::to_string(i) + " [" + std::to_string(c.begin) + ", " + std::to_string(c.end) + ")");
    ASSERT_LT(c.begin, c.end);
    ASSERT_LE(c.end, text.size());
    const std::string piece = text_of(document, c);
    EXPECT_LE(c.token_count, options.max_tokens);
    EXPECT_EQ(c.token_count, count(piece)) << piece;
    EXPECT_FALSE(is_space(piece.front()));
    EXPECT_FALSE(is_space(piece.back()));
    // Edges fall between words, except inside a word too long for any chunk.
    if (c.begin > 0 && !is_space(text[c.begin - 1])) {
      EXPECT_GT(tokens_in_word_at(text, c.begin), options.max_tokens);
    }
    if (c.end < text.size() && !is_space(text[c.end])) {
      EXPECT_GT(tokens_in_word_at(text, c.end - 1), options.max_tokens) << piece;
    }
    for (std::size_t b = c.begin; b < c.end; ++b) covered[b] = true;
    if (2 * c.token_count >= options.max_tokens) ++at_least_half_full;

    if (i > 0) {
      const Chunk& previous = chunks[i - 1];
      EXPECT_GT(c.begin, previous.begin);
      EXPECT_GT(c.end, previous.end);
      // Tokens are ordered: the shared ones run from the first starting at c.begin to the last
      // ending by previous.end.
      const auto first_shared = std::lower_bound(tokens.offsets.begin(), tokens.offsets.end(), c.begin,
                                                 [](const auto& t, std::size_t at) { return t.first < at; });
      std::size_t shared = 0;
      for (auto t = first_shared; t != tokens.offsets.end() && t->second <= previous.end; ++t) ++shared;
      EXPECT_LE(shared, options.overlap_tokens);
      // No gap between chunks except whitespace.
      for (std::size_t b = previous.end; b < c.begin; ++b) {
        EXPECT_TRUE(is_space(text[b])) << "lost byte " << b;
      }
    }
  }
  for (std::size_t b = 0; b < text.size(); ++b) {
    if (!is_space(text[b])) {
      ASSERT_TRUE(covered[b]) << "byte " << b << " is in no chunk";
    }
  }
  for (const auto& [b, e] : tokens.offsets) ASSERT_TRUE(covered[b] && covered[e - 1]);
  // Greedy packing: chunks are cut early only at a section end or before the last chunk.
  if (options.max_tokens >= 32) {
    EXPECT_GE(at_least_half_full * 10, chunks.size() * 9) << at_least_half_full << " of " << chunks.size();
  }

  const std::vector<Chunk> again = chunk(document, options.max_tokens, options.overlap_tokens);
  ASSERT_EQ(again.size(), chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(again[i].begin, chunks[i].begin);
    EXPECT_EQ(again[i].end, chunks[i].end);
    EXPECT_EQ(again[i].token_count, chunks[i].token_count);
    EXPECT_EQ(again[i].heading_path, chunks[i].heading_path);
  }
}

const std::vector<ChunkerOptions> kOptionSets = {{256, 32}, {128, 16}, {64, 0}, {48, 20}, {16, 7}, {8, 3}, {3, 1}};

TEST_F(ChunkerTest, PropertiesHoldOnTheDebianFaqWithLineBreaks) {
  ASSERT_TRUE(std::filesystem::exists(kDebianFaq)) << kDebianFaq << " is missing (package doc-debian)";
  const Document document = faq_document(read_gzip(kDebianFaq), true);
  ASSERT_GT(document.text.size(), 100'000u);
  for (const ChunkerOptions& options : kOptionSets) expect_chunker_properties(document, options);
}

TEST_F(ChunkerTest, PropertiesHoldOnTheDebianFaqWithJoinedLines) {
  ASSERT_TRUE(std::filesystem::exists(kDebianFaq)) << kDebianFaq << " is missing (package doc-debian)";
  const Document document = faq_document(read_gzip(kDebianFaq), false);
  for (const ChunkerOptions& options : kOptionSets) expect_chunker_properties(document, options);
}

TEST_F(ChunkerTest, PagesAndHeadingsOfTheFaqFollowTheChunks) {
  const Document document = faq_document(read_gzip(kDebianFaq), false);
  const std::vector<Chunk> chunks = chunk(document, 128, 16);
  ASSERT_GT(chunks.size(), 100u);
  std::size_t with_headings = 0;
  for (const Chunk& c : chunks) {
    const auto first = std::find_if(document.segments.begin(), document.segments.end(),
                                    [&](const TextSegment& s) { return s.end > c.begin; });
    ASSERT_NE(first, document.segments.end());
    EXPECT_EQ(c.heading_path, first->heading_path);
    EXPECT_EQ(c.page_first, first->page);
    const auto last = std::find_if(document.segments.rbegin(), document.segments.rend(),
                                   [&](const TextSegment& s) { return s.begin < c.end; });
    EXPECT_EQ(c.page_last, last->page);
    with_headings += c.heading_path.empty() ? 0 : 1;
  }
  EXPECT_GT(with_headings, chunks.size() / 2);
}

TEST_F(ChunkerTest, ShortParagraphsThatFitShareOneChunk) {
  const Document document = make_document({sentence(10), sentence(10, 3)});
  const std::vector<Chunk> chunks = chunk(document, 32, 4);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].begin, 0u);
  EXPECT_EQ(chunks[0].end, document.text.size());
  EXPECT_EQ(chunks[0].token_count, 20u);
}

TEST_F(ChunkerTest, WhenPagesAreUnitsNoChunkSpansTwoOfThem) {
  // Slides: short paragraphs that would share a chunk are cut where the page changes, and only there.
  Document document = make_document(std::vector<Paragraph>{
      {sentence(6), 1, {}}, {sentence(6, 1), 1, {}}, {sentence(6, 2), 2, {}}, {sentence(6, 3), 3, {}}});
  ASSERT_EQ(chunk(document, 64, 8).size(), 1u);  // as one flowing text, it all fits one chunk
  document.pages_are_units = true;
  const std::vector<Chunk> chunks = chunk(document, 64, 8);
  ASSERT_EQ(chunks.size(), 3u);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].page_first, i + 1);
    EXPECT_EQ(chunks[i].page_last, i + 1);
  }
  EXPECT_EQ(document.text.substr(chunks[0].begin, chunks[0].end - chunks[0].begin),
            sentence(6) + "\n\n" + sentence(6, 1));
}

TEST_F(ChunkerTest, RunningLinesAreInNoChunkWhereverTheyStand) {
  // A PDF's running header, in the middle here as a body would never have it, and after the body as the
  // PDF loader puts them.
  Document document = make_document(std::vector<Paragraph>{{sentence(6), 1, {}},
                                                           {"Operations Handbook page 1", 1, {}},
                                                           {sentence(6, 1), 2, {}},
                                                           {"Operations Handbook page 2", 2, {}},
                                                           {"Confidential", 2, {}}});
  ASSERT_EQ(chunk(document, 64, 8).size(), 1u);  // as text, it all fits one chunk
  for (const std::size_t s : {1, 3, 4}) document.segments[s].furniture = true;
  const std::vector<Chunk> chunks = chunk(document, 64, 8);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(document.text.substr(chunks[0].begin, chunks[0].end - chunks[0].begin), sentence(6));
  EXPECT_EQ(document.text.substr(chunks[1].begin, chunks[1].end - chunks[1].begin), sentence(6, 1));
  EXPECT_EQ(chunks[1].page_first, 2u);
}

// A document with a paragraph, then a table of `rows` rows (and a header) whose cells hold
// sentences, then a closing paragraph.
Document table_document(std::size_t rows, std::size_t words_per_cell, std::size_t intro_words = 10) {
  DocumentBuilder builder(1 << 20);
  builder.add_paragraph(sentence(intro_words));
  TableRows table;
  table.rows.push_back({"Name", "Role", "Office"});
  for (std::size_t r = 0; r < rows; ++r) {
    table.rows.push_back({"Person " + std::to_string(r), sentence(words_per_cell, r), sentence(words_per_cell, r + 1)});
  }
  builder.add_table(table);
  builder.add_paragraph(sentence(10, 3));
  auto document = std::move(builder).finish("md", "", 0);
  EXPECT_TRUE(document.ok());
  return document.ok() ? std::move(*document) : Document{};
}

TEST_F(ChunkerTest, ALongTableIsCutBetweenRowsAndEveryPieceRepeatsItsHeader) {
  const Document document = table_document(40, 4);
  const std::string header = "| Name | Role | Office |\n| --- | --- | --- |";
  const std::vector<Chunk> chunks = chunk(document, 64, 8);
  ASSERT_GT(chunks.size(), 4u);
  std::uint32_t next_row = 2;  // the first data row is the table's row 2
  for (const Chunk& c : chunks) {
    const std::string text = chunk_text(document, c);
    EXPECT_EQ(c.token_count, count(text)) << text;
    EXPECT_LE(c.token_count, 64u) << text;
    if (c.table.empty()) continue;
    EXPECT_EQ(c.table, "Table 1");
    // Every piece reads as a table: the header first, whole rows after it.
    EXPECT_TRUE(text.starts_with(header) || text.starts_with(sentence(10))) << text;
    const std::string_view span = std::string_view(document.text).substr(c.begin, c.end - c.begin);
    if (c.header_end > c.header_begin) {
      EXPECT_EQ(document.text.substr(c.header_begin, c.header_end - c.header_begin), header);
      EXPECT_TRUE(span.starts_with("| Person ")) << span;
    }
    EXPECT_TRUE(span.ends_with(" |") || span.ends_with(sentence(10, 3))) << span;
    EXPECT_EQ(c.row_first, next_row) << text;
    EXPECT_GE(c.row_last, c.row_first);
    next_row = c.row_last + 1;
  }
  EXPECT_EQ(next_row, 42u);  // every row in a chunk, in order, none twice
}

TEST_F(ChunkerTest, ARowIsNotCutWhenAWholeRowFitsEvenIfTheChunkStaysShort) {
  // Rows of about 20 tokens with sentence ends inside, chunks of 48: a row and the repeated header
  // (about 17) fill a chunk; cutting inside the next row (at a sentence end) would fill it more, and
  // is not done. Nor is the first row cut to fill the chunk of the 20-token paragraph before it.
  const Document document = table_document(6, 6, 20);
  const std::vector<Chunk> chunks = chunk(document, 48, 4);
  ASSERT_GE(chunks.size(), 7u);
  EXPECT_EQ(text_of(document, chunks[0]), sentence(20));
  for (const Chunk& c : chunks) {
    const std::string_view span = std::string_view(document.text).substr(c.begin, c.end - c.begin);
    if (c.table.empty()) continue;
    EXPECT_TRUE(span.starts_with("| Person ") || span.starts_with("| Name ")) << span;
    EXPECT_TRUE(span.ends_with(" |") || span.ends_with(sentence(10, 3))) << span;
    EXPECT_LE(c.token_count, 48u);
    EXPECT_EQ(c.row_first, c.row_last);
  }
}

TEST_F(ChunkerTest, ParagraphsThatDoNotFitAreCutAtTheBreakWithoutOverlap) {
  const std::string first = sentence(9) + " " + sentence(11, 1), second = sentence(20, 2);
  const Document document = make_document({first, second});
  const std::vector<Chunk> chunks = chunk(document, 32, 4);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(text_of(document, chunks[0]), first);
  EXPECT_EQ(text_of(document, chunks[1]), second);
  EXPECT_EQ(chunks[0].token_count, 20u);
  EXPECT_EQ(chunks[1].token_count, 20u);
}

TEST_F(ChunkerTest, ShortParagraphSharesAChunkWithTheNextOnesFirstSentences) {
  // 6 tokens then a 48-token paragraph: cutting after the short one would waste most of a chunk.
  const Document document = make_document(
      {sentence(6), sentence(12) + " " + sentence(12, 1) + " " + sentence(12, 2) + " " + sentence(12, 3)});
  const std::vector<Chunk> chunks = chunk(document, 32, 0);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].token_count, 30u);  // the short paragraph and two sentences
  EXPECT_EQ(document.text.substr(chunks[0].end - 1, 1), ".");
  EXPECT_EQ(chunks[1].token_count, 24u);
}

TEST_F(ChunkerTest, LongParagraphIsCutAtASentenceEndAndOverlapsToASentenceStart) {
  const std::string s1 = sentence(14), s2 = sentence(4, 1), s3 = sentence(14, 2);
  const Document document = make_document({s1 + " " + s2 + " " + s3});
  const std::vector<Chunk> chunks = chunk(document, 24, 6);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(text_of(document, chunks[0]), s1 + " " + s2);  // the last sentence end that fits
  EXPECT_EQ(text_of(document, chunks[1]), s2 + " " + s3);  // overlap snapped forward to s2's start
  EXPECT_EQ(chunks[1].token_count, 18u);
}

TEST_F(ChunkerTest, OverlapFallsBackToAWordStart) {
  const std::string s1 = sentence(12), s2 = sentence(12, 1), s3 = sentence(12, 2), s4 = sentence(12, 3);
  const Document document = make_document({s1 + " " + s2 + " " + s3 + " " + s4});
  const std::vector<Chunk> chunks = chunk(document, 32, 6);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(text_of(document, chunks[0]), s1 + " " + s2);
  EXPECT_EQ(chunks[1].token_count, 6u + 24u);  // the last 6 tokens of s2 (no sentence start there)
  EXPECT_EQ(document.text[chunks[1].begin - 1], ' ');
  EXPECT_EQ(chunks[1].end, document.text.size());
}

TEST_F(ChunkerTest, SentenceLongerThanTheLimitIsCutBetweenWords) {
  const Document document = make_document({sentence(50)});
  const std::vector<Chunk> chunks = chunk(document, 16, 0);
  ASSERT_EQ(chunks.size(), 4u);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].token_count, i + 1 < chunks.size() ? 16u : 2u);
    if (i > 0) {
      EXPECT_EQ(chunks[i].begin, chunks[i - 1].end + 1);  // just the space between
    }
  }
}

TEST_F(ChunkerTest, CjkSentencesEndWithoutSpaces) {
  const std::string s = "我们今天去公园散步。";  // 10 characters, 10 tokens
  ASSERT_EQ(count(s), 10u);
  const Document document = make_document({s + s + s});
  const std::vector<Chunk> chunks = chunk(document, 24, 0);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(text_of(document, chunks[0]), s + s);
  EXPECT_EQ(text_of(document, chunks[1]), s);
}

TEST_F(ChunkerTest, HugeUrlIsCutBesidePunctuationOnly) {
  std::string url = "https://example.org";
  for (int i = 0; i < 40; ++i) url += "/part" + std::to_string(i);
  const Document document = make_document({"See " + url + " for details."});
  const std::vector<Chunk> chunks = chunk(document, 16, 3);
  ASSERT_GT(chunks.size(), 4u);
  EXPECT_EQ(text_of(document, chunks[0]).substr(0, 12), "See https://");  // no chunk of "See" alone
  for (const Chunk& c : chunks) {
    const std::string piece = text_of(document, c);
    EXPECT_LE(c.token_count, 16u);
    EXPECT_EQ(c.token_count, count(piece)) << piece;
    // Inside the URL, cuts fall beside a "/" (or the "." of ".org"), never inside "part12".
    if (c.end < document.text.size() && !is_space(document.text[c.end])) {
      const char after = document.text[c.end];
      EXPECT_TRUE(after == '/' || after == '.' || piece.back() == '/' || piece.back() == ':') << piece;
    }
  }
  const std::string last = text_of(document, chunks.back());
  EXPECT_EQ(last.substr(last.size() - 12), "for details.");
}

TEST_F(ChunkerTest, HugeWordWithoutPunctuationIsCutBetweenWordPieces) {
  const std::string word = "xqzvbnmkjhgfdswrtplkxqzvbnmkjhgfdswrtplk";  // many pieces, no punctuation
  ASSERT_GT(count(word), 8u);
  const Document document = make_document({"Before " + word + " after."});
  const std::vector<Chunk> chunks = chunk(document, 4, 1);
  ASSERT_GT(chunks.size(), 2u);
  std::string rebuilt;
  for (const Chunk& c : chunks) {
    const std::string piece = text_of(document, c);
    EXPECT_LE(c.token_count, 4u) << piece;
    EXPECT_EQ(c.token_count, count(piece)) << piece;
  }
  EXPECT_EQ(chunks.front().begin, 0u);
  EXPECT_EQ(chunks.back().end, document.text.size());
}

TEST_F(ChunkerTest, PagesAndHeadingPathsComeFromTheSegments) {
  const std::vector<std::string> intro = {"Intro"}, details = {"Intro", "Details"};
  // A paragraph over a page break is two segments.
  Document document = make_document(std::vector<Paragraph>{{sentence(20), 1, intro}, {sentence(20, 1), 2, intro}});
  const std::size_t split = document.segments[1].begin + 30;
  ASSERT_EQ(document.text[split - 1], ' ');
  document.segments.insert(document.segments.begin() + 2, segment(split, document.segments[1].end, 3, intro));
  document.segments[1].end = split - 1;
  document.text += "\n\n" + sentence(10, 2);
  document.segments.push_back(segment(document.text.size() - sentence(10, 2).size(), document.text.size(), 3, details));

  const std::vector<Chunk> chunks = chunk(document, 64, 4);
  // The heading change comes after 40 tokens (over half of 64): it starts a new chunk.
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].token_count, 40u);
  EXPECT_EQ(chunks[0].page_first, 1u);
  EXPECT_EQ(chunks[0].page_last, 3u);
  EXPECT_EQ(chunks[0].heading_path, intro);
  EXPECT_EQ(chunks[1].page_first, 3u);
  EXPECT_EQ(chunks[1].page_last, 3u);
  EXPECT_EQ(chunks[1].heading_path, details);
  EXPECT_EQ(chunks[1].token_count, 10u);
}

TEST_F(ChunkerTest, HeadingChangeBeforeHalfFullDoesNotCut) {
  const std::vector<std::string> a = {"A"}, b = {"B"};
  const Document document = make_document(std::vector<Paragraph>{{sentence(10), 0, a}, {sentence(20, 1), 0, b}});
  const std::vector<Chunk> chunks = chunk(document, 64, 4);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].heading_path, a);
  EXPECT_EQ(chunks[0].page_first, 0u);
  EXPECT_EQ(chunks[0].page_last, 0u);
}

TEST_F(ChunkerTest, RejectsUnusableOptions) {
  const Document document = make_document({sentence(10)});
  for (const ChunkerOptions& options : {ChunkerOptions{0, 0}, ChunkerOptions{16, 8}, ChunkerOptions{16, 20}}) {
    const auto chunks = chunk_document(document, *tokenizer_, options);
    ASSERT_FALSE(chunks.ok());
    EXPECT_EQ(chunks.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(chunks.error().message.find("max_tokens"), std::string::npos);
  }
  EXPECT_TRUE(chunk_document(document, *tokenizer_, {16, 7}).ok());
  EXPECT_TRUE(chunk_document(document, *tokenizer_, {1, 0}).ok());
}

TEST_F(ChunkerTest, EmptyDocumentHasNoChunks) {
  const auto chunks = chunk_document(Document{}, *tokenizer_, {});
  ASSERT_TRUE(chunks.ok());
  EXPECT_TRUE(chunks->empty());
}

TEST(TextBoundariesTest, SentenceEndsSkipAbbreviationsAndInitials) {
  const auto ends = [](std::string_view s) { return ends_sentence(s, s.size()); };
  EXPECT_TRUE(ends("It works."));
  EXPECT_TRUE(ends("Really?"));
  EXPECT_TRUE(ends("Stop!"));
  EXPECT_TRUE(ends("He said \"no.\""));
  EXPECT_TRUE(ends("(see above.)"));
  EXPECT_TRUE(ends("中文。"));
  EXPECT_TRUE(ends("Version 2.1."));
  EXPECT_FALSE(ends("tools, e.g."));
  EXPECT_FALSE(ends("that is, i.e."));
  EXPECT_FALSE(ends("ask Dr."));
  EXPECT_FALSE(ends("written by J."));
  EXPECT_FALSE(ends("made in the U.S."));
  EXPECT_FALSE(ends("a, b, c"));
  EXPECT_FALSE(ends(""));
}

TEST_F(ChunkerTest, BoundariesRankParagraphsSentencesLinesWordsAndPieces) {
  const std::string text = "Hello world.\n\nNext line\nhere e.g. there 中文。好 a/b tokenization";
  const Encoding tokens = tokenizer_->tokenize(text);
  const std::vector<Boundary> b = token_boundaries(text, tokens);
  ASSERT_EQ(b.size(), tokens.size() + 1);
  const auto at = [&](std::string_view word) {  // the boundary before the token starting with `word`
    const std::size_t offset = text.find(word);
    for (std::size_t j = 0; j < tokens.size(); ++j) {
      if (tokens.offsets[j].first == offset) return b[j];
    }
    ADD_FAILURE() << "no token starts at " << word;
    return Boundary::section;
  };
  EXPECT_EQ(b.front(), Boundary::section);
  EXPECT_EQ(b.back(), Boundary::section);
  EXPECT_EQ(at("world"), Boundary::word);
  EXPECT_EQ(at(".\n\n"), Boundary::pre_token);
  EXPECT_EQ(at("Next"), Boundary::paragraph);
  EXPECT_EQ(at("here"), Boundary::line);
  EXPECT_EQ(at("there"), Boundary::word);  // not after "e.g."
  EXPECT_EQ(at("文"), Boundary::pre_token);
  EXPECT_EQ(at("好"), Boundary::sentence);
  EXPECT_EQ(at("/b"), Boundary::pre_token);
  EXPECT_EQ(b[tokens.size() - 1], Boundary::word_piece);  // "token|##ization"
}

// NFD splits a Hangul syllable into 2-3 jamo tokens that all span the syllable, so token offsets
// overlap; the chunker once aborted on them (found by fuzz/chunker, input in fuzz/regressions/chunker).
TEST_F(ChunkerTest, HangulSyllablesAreNeverCutBetweenTheirJamo) {
  const std::string word = "한국어텍스트한국어텍스트";  // 12 syllables, no spaces: cut between pieces
  const Document document = make_document({"앞 " + word + " 뒤.", "한국어 텍스트."});
  const Encoding tokens = tokenizer_->tokenize(document.text);
  const std::vector<Boundary> b = token_boundaries(document.text, tokens);
  std::size_t inside = 0;
  for (std::size_t j = 1; j < tokens.size(); ++j) {
    const bool overlaps = tokens.offsets[j].first < tokens.offsets[j - 1].second;
    EXPECT_EQ(b[j] == Boundary::inside_character, overlaps) << j;
    inside += overlaps;
  }
  EXPECT_GT(inside, 12u);
  const auto starts_character = [&](std::size_t at) {
    return at == document.text.size() || (static_cast<unsigned char>(document.text[at]) & 0xC0) != 0x80;
  };
  for (const std::size_t max_tokens : {4u, 8u, 16u}) {
    const std::vector<Chunk> chunks = chunk(document, max_tokens, 1);
    ASSERT_GT(chunks.size(), 1u);
    for (const Chunk& c : chunks) {
      const std::string piece = text_of(document, c);
      EXPECT_TRUE(starts_character(c.begin) && starts_character(c.end)) << piece;
      EXPECT_LE(c.token_count, max_tokens) << piece;
      EXPECT_EQ(c.token_count, count(piece)) << piece;
    }
    EXPECT_EQ(chunks.front().begin, 0u);
    EXPECT_EQ(chunks.back().end, document.text.size());
  }
}

}  // namespace
}  // namespace kotae::text
