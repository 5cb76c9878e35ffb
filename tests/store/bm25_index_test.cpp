// Bm25Index: ranking, stemming, stop words, removal, filters, and agreement with SQLite FTS5's
// bm25() over real text (the Debian FAQ's paragraphs and questions, built by the store tests' fixture).
#include "store/bm25_index.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "text/stop_words.h"

namespace {

using kotae::store::Bm25Hit;
using kotae::store::Bm25Index;

std::vector<std::int64_t> ids(const std::vector<Bm25Hit>& hits) {
  std::vector<std::int64_t> out;
  for (const auto& hit : hits) out.push_back(hit.chunk_id);
  return out;
}

std::vector<Bm25Hit> search(const Bm25Index& index, std::string_view query, std::size_t k,
                            const Bm25Index::DocumentPredicate* allow = nullptr) {
  const auto terms = Bm25Index::query_terms(query);
  return index.search(terms, k, allow);
}

TEST(Bm25Index, MoreOccurrencesAndRarerTermsRankFirst) {
  Bm25Index index;
  index.add(1, 10, "the kernel boots the system", "");
  index.add(2, 10, "kernel kernel kernel modules for the kernel", "");
  index.add(3, 11, "a package of the system", "");
  index.add(4, 11, "another package for the system", "");
  EXPECT_EQ(ids(search(index, "kernel", 10)), (std::vector<std::int64_t>{2, 1}));
  // "boots" is in one chunk, "system" in three: the rarer word decides.
  const auto hits = search(index, "system boots", 10);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].chunk_id, 1);
  EXPECT_GT(hits[0].score, hits[1].score);
  EXPECT_EQ(hits[0].document_id, 10);
}

TEST(Bm25Index, StemsLikeFts5AndDropsStopWords) {
  Bm25Index index;
  index.add(1, 1, "How to run the installer", "");
  index.add(2, 1, "Packages are upgraded nightly", "[\"Upgrading\"]");
  EXPECT_EQ(ids(search(index, "running", 10)), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(ids(search(index, "package upgrade", 10)), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(Bm25Index::query_terms("What is the Debian package?"), (std::vector<std::string>{"debian", "packag"}));
  EXPECT_EQ(Bm25Index::query_terms("to be or not to be"), (std::vector<std::string>{"to", "be", "or", "not"}));
  EXPECT_EQ(Bm25Index::query_terms("Café AND \"x*\""), (std::vector<std::string>{"cafe", "x"}));
  // Stop words count when the query has nothing else, and only then.
  EXPECT_EQ(ids(search(index, "how the", 10)), (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(search(index, "the zebra", 10).empty());
}

TEST(Bm25Index, RemovedChunksAreGoneAndCountsFollow) {
  Bm25Index index;
  for (int i = 0; i < 40; ++i) index.add(i, i / 10, i % 2 ? "apt source list" : "apt mirror", "");
  EXPECT_EQ(search(index, "apt", 100).size(), 40u);
  for (int i = 0; i < 30; ++i) EXPECT_TRUE(index.remove(i));  // past a quarter: the lists are compacted
  EXPECT_FALSE(index.remove(3));
  EXPECT_EQ(index.size(), 10u);
  auto hits = search(index, "apt mirror", 100);
  ASSERT_EQ(hits.size(), 10u);
  for (const auto& hit : hits) EXPECT_GE(hit.chunk_id, 30);
  EXPECT_EQ(hits[0].chunk_id % 2, 0);  // the mirror chunks first
  index.add(5, 0, "mirror", "");
  EXPECT_EQ(search(index, "mirror", 1)[0].chunk_id, 5);  // shortest chunk with the word
  index.add(5, 0, "something else", "");                 // replaced
  EXPECT_TRUE(search(index, "something", 10).size() == 1);
  EXPECT_EQ(search(index, "mirror", 100).size(), 5u);
}

TEST(Bm25Index, AFilterKeepsOnlyAllowedDocuments) {
  Bm25Index index;
  for (int i = 0; i < 20; ++i) index.add(i, i % 4, "debian release notes", "");
  const Bm25Index::DocumentPredicate only_two = [](std::int64_t document) { return document == 2; };
  const auto hits = search(index, "release", 3, &only_two);
  ASSERT_EQ(hits.size(), 3u);
  for (const auto& hit : hits) EXPECT_EQ(hit.document_id, 2);
  EXPECT_EQ(ids(hits), (std::vector<std::int64_t>{2, 6, 10}));  // equal scores: lower ids first
}

std::vector<nlohmann::json> read_jsonl(const char* path) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  }
  return rows;
}

// The FTS5 query the collection used to build: each ASCII word quoted, stop words out, OR.
std::string fts5_query(const std::vector<std::string>& words) {
  std::string query;
  for (const auto& word : words) query += (query.empty() ? "\"" : " OR \"") + word + "\"";
  return query;
}

TEST(Bm25Index, RanksLikeFts5OnTheDebianFaq) {
  const auto corpus = read_jsonl(KOTAE_FAQ_BEIR_DIR "/corpus.jsonl");
  const auto queries = read_jsonl(KOTAE_FAQ_BEIR_DIR "/queries.jsonl");
  ASSERT_FALSE(corpus.empty()) << "the fixture writes " KOTAE_FAQ_BEIR_DIR;
  ASSERT_GE(queries.size(), 120u);
  // The FAQ's answers split into paragraphs, each under its answer's id as a heading.
  std::vector<std::pair<std::string, std::string>> paragraphs;
  for (const auto& answer : corpus) {
    const std::string text = answer["text"].get<std::string>();
    const std::string heading = nlohmann::json::array({answer["_id"].get<std::string>()}).dump();
    for (std::size_t start = 0; start < text.size() && paragraphs.size() < 300;) {
      std::size_t end = text.find("\n\n", start);
      if (end == std::string::npos) end = text.size();
      if (end > start) paragraphs.emplace_back(text.substr(start, end - start), heading);
      start = end + 2;
    }
  }
  ASSERT_EQ(paragraphs.size(), 300u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE VIRTUAL TABLE t USING fts5(text, heading_path, "
                         "tokenize='porter unicode61 remove_diacritics 2');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO t(rowid, text, heading_path) VALUES (?, ?, ?)", -1, &insert, nullptr),
            SQLITE_OK);
  Bm25Index index;
  for (std::size_t i = 0; i < paragraphs.size(); ++i) {
    const auto& [text, heading] = paragraphs[i];
    sqlite3_reset(insert);
    sqlite3_bind_int64(insert, 1, static_cast<sqlite3_int64>(i));
    sqlite3_bind_text(insert, 2, text.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, heading.c_str(), -1, SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
    index.add(static_cast<std::int64_t>(i), 0, text, heading);
  }
  sqlite3_finalize(insert);
  sqlite3_stmt* match = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t, 1.0, 0.5) LIMIT 10", -1,
                               &match, nullptr),
            SQLITE_OK);
  double overlap_sum = 0;
  std::size_t compared = 0;
  for (std::size_t q = 0; q < queries.size() && compared < 30; q += 4) {
    const std::string query = queries[q]["text"].get<std::string>();
    // FTS5 stems the words itself, so it gets them unstemmed: the query's terms before stemming are
    // its stop-word-free words, which unicode61 then folds the same way.
    std::vector<std::string> words;
    {
      std::string word;
      for (const char c : query + " ") {
        if (std::isalnum(static_cast<unsigned char>(c))) {
          word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        } else if (!word.empty()) {
          if (!kotae::text::is_english_stop_word(word) && std::find(words.begin(), words.end(), word) == words.end()) {
            words.push_back(word);
          }
          word.clear();
        }
      }
    }
    if (words.empty()) continue;
    sqlite3_reset(match);
    const std::string fts = fts5_query(words);
    sqlite3_bind_text(match, 1, fts.c_str(), -1, SQLITE_TRANSIENT);
    std::set<std::int64_t> theirs;
    while (sqlite3_step(match) == SQLITE_ROW) theirs.insert(sqlite3_column_int64(match, 0));
    const auto ours = search(index, query, 10);
    if (theirs.empty()) continue;
    std::size_t shared = 0;
    for (const auto& hit : ours) shared += theirs.count(hit.chunk_id);
    overlap_sum += static_cast<double>(shared) / static_cast<double>(theirs.size());
    ++compared;
  }
  sqlite3_finalize(match);
  sqlite3_close(db);
  ASSERT_GE(compared, 25u);
  const double overlap = overlap_sum / static_cast<double>(compared);
  std::printf("top-10 overlap with FTS5 bm25 over %zu queries: %.3f\n", compared, overlap);
  EXPECT_GE(overlap, 0.9);
}

}  // namespace
