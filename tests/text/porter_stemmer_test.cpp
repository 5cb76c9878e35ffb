// Porter stemmer: the classic pairs, and the terms of real text compared with what SQLite's FTS5
// ("porter unicode61 remove_diacritics 2", as chunks_fts) stores for the same text.
#include "text/porter_stemmer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <set>
#include <string>
#include <utility>

#include "store/bm25_index.h"

namespace {

using kotae::text::porter_stem;

TEST(PorterStemmer, StemsTheClassicExamples) {
  const std::pair<const char*, const char*> pairs[] = {{"caresses", "caress"},
                                                       {"ponies", "poni"},
                                                       {"ties", "ti"},
                                                       {"caress", "caress"},
                                                       {"cats", "cat"},
                                                       {"feed", "feed"},
                                                       {"agreed", "agre"},
                                                       {"plastered", "plaster"},
                                                       {"bled", "bled"},
                                                       {"motoring", "motor"},
                                                       {"sing", "sing"},
                                                       {"conflated", "conflat"},
                                                       {"troubled", "troubl"},
                                                       {"sized", "size"},
                                                       {"hopping", "hop"},
                                                       {"tanned", "tan"},
                                                       {"falling", "fall"},
                                                       {"hissing", "hiss"},
                                                       {"fizzed", "fizz"},
                                                       {"failing", "fail"},
                                                       {"filing", "file"},
                                                       {"happy", "happi"},
                                                       {"sky", "sky"},
                                                       {"relational", "relat"},
                                                       {"conditional", "condit"},
                                                       {"rational", "ration"},
                                                       {"valenci", "valenc"},
                                                       {"digitizer", "digit"},
                                                       {"operator", "oper"},
                                                       {"generalization", "gener"},
                                                       {"electrical", "electr"},
                                                       {"hopeful", "hope"},
                                                       {"goodness", "good"},
                                                       {"revival", "reviv"},
                                                       {"allowance", "allow"},
                                                       {"inference", "infer"},
                                                       {"adjustable", "adjust"},
                                                       {"effective", "effect"},
                                                       {"probate", "probat"},
                                                       {"rate", "rate"},
                                                       {"cease", "ceas"},
                                                       {"controll", "control"},
                                                       {"roll", "roll"},
                                                       {"generalizations", "gener"},
                                                       {"oscillators", "oscil"},
                                                       {"seeing", "see"},
                                                       {"running", "run"},
                                                       {"packages", "packag"},
                                                       {"debian", "debian"}};
  for (const auto& [word, stem] : pairs) EXPECT_EQ(porter_stem(word), stem) << word;
}

TEST(PorterStemmer, LeavesShortAndLongWordsAlone) {
  EXPECT_EQ(porter_stem("is"), "is");
  EXPECT_EQ(porter_stem("as"), "as");
  EXPECT_EQ(porter_stem(""), "");
  const std::string long_word(65, 's');
  EXPECT_EQ(porter_stem(long_word), long_word);
}

std::string read_debian_faq() {
  std::string text;
  FILE* pipe = popen("gzip -dc /usr/share/doc/debian/FAQ/debian-faq.en.txt.gz", "r");
  if (pipe == nullptr) return text;
  char buffer[65536];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
  pclose(pipe);
  return text;
}

// Each line of the FAQ as its own row; the distinct terms FTS5 stores must be the distinct terms our
// tokenizer gives.
TEST(PorterStemmer, TermsMatchSqliteFts5OnTheDebianFaq) {
  const std::string faq = read_debian_faq();
  ASSERT_GT(faq.size(), 100000u) << "the Debian FAQ (package doc-debian) is needed";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2');"
                         "CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO t(text) VALUES (?)", -1, &insert, nullptr), SQLITE_OK);
  std::set<std::string> ours;
  std::size_t start = 0;
  while (start < faq.size()) {
    std::size_t end = faq.find('\n', start);
    if (end == std::string::npos) end = faq.size();
    const std::string line = faq.substr(start, end - start);
    start = end + 1;
    sqlite3_reset(insert);
    sqlite3_bind_text(insert, 1, line.data(), static_cast<int>(line.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
    for (auto& term : kotae::store::Bm25Index::terms(line)) ours.insert(std::move(term));
  }
  sqlite3_finalize(insert);
  std::set<std::string> theirs;
  sqlite3_stmt* vocabulary = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT term FROM v", -1, &vocabulary, nullptr), SQLITE_OK);
  while (sqlite3_step(vocabulary) == SQLITE_ROW) {
    theirs.emplace(reinterpret_cast<const char*>(sqlite3_column_text(vocabulary, 0)),
                   static_cast<std::size_t>(sqlite3_column_bytes(vocabulary, 0)));
  }
  sqlite3_finalize(vocabulary);
  sqlite3_close(db);

  std::set<std::string> all = ours;
  all.insert(theirs.begin(), theirs.end());
  std::size_t both = 0;
  std::string differences;
  for (const auto& term : all) {
    if (ours.contains(term) && theirs.contains(term)) {
      ++both;
    } else if (differences.size() < 400) {
      differences += (ours.contains(term) ? " ours:" : " fts5:") + term;
    }
  }
  const double agreement = static_cast<double>(both) / static_cast<double>(all.size());
  std::printf("terms: %zu ours, %zu FTS5, agreement %.5f\n", ours.size(), theirs.size(), agreement);
  EXPECT_GE(agreement, 0.99) << differences;
  EXPECT_GT(theirs.size(), 1500u);
}

}  // namespace
