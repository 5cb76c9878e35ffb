// The collection store against real SQLite (WAL, FTS5) and the real vector index: documents in and
// out, BM25 and vector search with filters, persistence, recovery after a crash, a damaged index,
// a full disk.

#include "store/collection.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/store/store_test_support.h"

namespace kotae::store {
namespace {

using testing::make_document;
using testing::put;
using testing::raw_count;
using testing::raw_sql;
using testing::TempDir;

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

constexpr std::size_t kDim = 16;

CollectionInfo test_info(std::size_t dimension = kDim) {
  return CollectionInfo{"test-embedder/fp32", dimension, 256, 32};
}

std::vector<std::int64_t> ids_of(const std::vector<ScoredChunk>& results) {
  std::vector<std::int64_t> ids;
  for (const auto& result : results) ids.push_back(result.chunk_id);
  return ids;
}

// --- opening -----------------------------------------------------------------------------------------

TEST(Collection, CreatesThenReopensWithTheStoredSettings) {
  TempDir temp;
  const auto dir = temp.path() / "notes";
  {
    auto created = Collection::open_or_create(dir, test_info());
    ASSERT_OK(created);
    EXPECT_EQ((*created)->info().embedder_id, "test-embedder/fp32");
    EXPECT_EQ((*created)->dir(), dir);
    EXPECT_EQ((*created)->document_count(), 0u);
  }
  std::ifstream manifest_file(dir / "manifest.json");
  ASSERT_TRUE(manifest_file.good());
  const auto manifest = nlohmann::json::parse(manifest_file);
  EXPECT_EQ(manifest.at("embedder_id"), "test-embedder/fp32");
  EXPECT_EQ(manifest.at("dimension"), kDim);
  EXPECT_EQ(manifest.at("chunk_tokens"), 256);
  EXPECT_EQ(manifest.at("overlap_tokens"), 32);
  EXPECT_EQ(manifest.at("format_version"), 1);

  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  EXPECT_EQ((*reopened)->info().embedder_id, "test-embedder/fp32");
  EXPECT_EQ((*reopened)->info().dimension, kDim);
  EXPECT_EQ((*reopened)->info().chunk_tokens, 256u);
  EXPECT_EQ((*reopened)->info().overlap_tokens, 32u);
}

TEST(Collection, KeepsSentenceVectorsAndUpgradesACollectionStoredWithout) {
  TempDir temp;
  const auto dir = temp.path() / "sentences";
  std::mt19937 rng(3);
  auto input = testing::make_document("a.md", "md", {"One sentence. Two sentence.", "Three."}, kDim, rng);
  const std::vector<std::vector<SentenceVector>> sentences = {
      {{0, 13, testing::random_unit_vector(kDim, rng)}, {14, 27, testing::random_unit_vector(kDim, rng)}},
      {{0, 6, testing::random_unit_vector(kDim, rng)}}};
  std::vector<std::int64_t> ids;
  {
    auto collection = Collection::open_or_create(dir, test_info());
    ASSERT_OK(collection);
    auto bad = sentences;
    bad[1][0].end = 99;  // past the end of its chunk
    EXPECT_EQ((*collection)->put_document(input.document, input.chunks, input.embeddings, bad).error().code,
              ErrorCode::invalid_argument);
    auto id = (*collection)->put_document(input.document, input.chunks, input.embeddings, sentences);
    ASSERT_OK(id);
    auto chunks = (*collection)->document_chunks(*id);
    ASSERT_OK(chunks);
    for (const auto& chunk : *chunks) ids.push_back(chunk.id);
    auto stored = (*collection)->chunk_sentences(ids);
    ASSERT_OK(stored);
    ASSERT_EQ(stored->size(), 2u);
    ASSERT_EQ((*stored)[0].size(), 2u);
    EXPECT_EQ((*stored)[0][1].begin, 14u);
    EXPECT_EQ((*stored)[0][1].end, 27u);
    double cosine = 0;
    for (std::size_t h = 0; h < kDim; ++h) cosine += double((*stored)[0][1].vector[h]) * sentences[0][1].vector[h];
    EXPECT_GT(cosine, 0.995);  // int8: ~1e-3 at 384 dimensions, more at these 16
  }
  // A collection from before sentence vectors (schema version 1) opens, upgraded, its chunks intact.
  const auto database = dir / "kotae.db";
  ASSERT_EQ(testing::raw_sql(database,
                             "ALTER TABLE chunks DROP COLUMN sentences; ALTER TABLE chunks DROP COLUMN table_name; "
                             "ALTER TABLE chunks DROP COLUMN row_first; ALTER TABLE chunks DROP COLUMN row_last; "
                             "ALTER TABLE chunks DROP COLUMN boxes; "
                             "PRAGMA user_version=1"),
            "");
  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  EXPECT_EQ(testing::raw_count(database, "PRAGMA user_version"), 4);
  // Its documents will be indexed again (their files no longer look unchanged), gaining sentences.
  EXPECT_EQ(testing::raw_count(database, "SELECT count(*) FROM documents WHERE sha256 = '' AND modified_ns = 0"), 1);
  EXPECT_EQ((*reopened)->chunk_count(), 2u);
  auto upgraded = (*reopened)->chunk_sentences(ids);
  ASSERT_OK(upgraded);
  EXPECT_TRUE((*upgraded)[0].empty() && (*upgraded)[1].empty());
  const std::vector<std::int64_t> gone = {ids.back() + 100};
  EXPECT_EQ((*reopened)->chunk_sentences(gone).error().code, ErrorCode::not_found);
}

TEST(Collection, OpeningNothingIsNotFound) {
  TempDir temp;
  auto opened = Collection::open(temp.path() / "absent");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::not_found);
}

TEST(Collection, AnotherEmbedderIsAnErrorNamingBoth) {
  TempDir temp;
  ASSERT_OK(Collection::open_or_create(temp.path() / "c", test_info()));
  auto other = Collection::open_or_create(temp.path() / "c", CollectionInfo{"other-model/int8", 384, 256, 32});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(other.error().message.find("test-embedder/fp32"), std::string::npos) << other.error().message;
  EXPECT_NE(other.error().message.find("other-model/int8"), std::string::npos) << other.error().message;

  auto other_dimension = Collection::open_or_create(temp.path() / "c", test_info(32));
  ASSERT_FALSE(other_dimension.ok());
  EXPECT_EQ(other_dimension.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(other_dimension.error().message.find("32"), std::string::npos) << other_dimension.error().message;
}

TEST(Collection, ADatabaseFileThatIsNotOneIsCorrupt) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  std::filesystem::create_directories(dir);
  {
    std::ofstream garbage(dir / "kotae.db", std::ios::binary);
    for (int i = 0; i < 8192; ++i) garbage.put(static_cast<char>((i * 131 + 7) & 0xff));
  }
  auto opened = Collection::open_or_create(dir, test_info());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::corrupt) << opened.error().message;
  EXPECT_NE(opened.error().message.find("kotae.db"), std::string::npos) << opened.error().message;
}

// --- documents -------------------------------------------------------------------------------------

TEST(Collection, StoresFindsAndRemovesDocuments) {
  TempDir temp;
  std::mt19937 rng(1);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  const auto input = make_document("/docs/guide.md", "md", {"First chunk.", "Second chunk.", "Third chunk."}, kDim, rng,
                                   {"Guide", "Install \"quoted\""});
  auto id = put(collection, input);
  ASSERT_OK(id);
  EXPECT_GT(*id, 0);
  EXPECT_EQ(collection.document_count(), 1u);
  EXPECT_EQ(collection.chunk_count(), 3u);

  auto found = collection.find_document("/docs/guide.md");
  ASSERT_OK(found);
  ASSERT_TRUE(found->has_value());
  const DocumentRecord& record = **found;
  EXPECT_EQ(record.id, *id);
  EXPECT_EQ(record.title, "Title of /docs/guide.md");
  EXPECT_EQ(record.sha256, input.document.sha256);
  EXPECT_EQ(record.size, 1234);
  EXPECT_EQ(record.modified_ns, input.document.modified_ns);
  EXPECT_EQ(record.format, "md");
  EXPECT_EQ(record.metadata_json, R"({"source":"test"})");
  EXPECT_EQ(record.chunk_count, 3);
  EXPECT_TRUE(record.text.empty());

  auto with_text = collection.document(*id);
  ASSERT_OK(with_text);
  ASSERT_TRUE(with_text->has_value());
  EXPECT_EQ((*with_text)->text, input.document.text);
  auto listed = collection.documents();
  ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].path, "/docs/guide.md");

  auto chunks = collection.document_chunks(*id);
  ASSERT_OK(chunks);
  ASSERT_EQ(chunks->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const ChunkRecord& chunk = (*chunks)[i];
    EXPECT_EQ(chunk.document_id, *id);
    EXPECT_EQ(chunk.ordinal, i);
    EXPECT_EQ(chunk.text, input.chunks[i].text);
    EXPECT_EQ(input.document.text.substr(chunk.begin, chunk.end - chunk.begin), chunk.text);
    EXPECT_EQ(chunk.page_first, i + 1);
    EXPECT_EQ(chunk.page_last, i + 2);
    EXPECT_EQ(chunk.heading_path, (std::vector<std::string>{"Guide", "Install \"quoted\""}));
    EXPECT_EQ(chunk.table, i == 1 ? "Prices" : "");
    EXPECT_EQ(chunk.row_first, i == 1 ? 2u : 0u);
    EXPECT_EQ(chunk.row_last, i == 1 ? 10u : 0u);
    ASSERT_EQ(chunk.boxes.size(), i == 1 ? 1u : 0u);
    if (i == 1) {
      EXPECT_EQ(chunk.boxes[0].begin, chunk.begin);
      EXPECT_EQ(chunk.boxes[0].page, 2u);
      EXPECT_FLOAT_EQ(chunk.boxes[0].right, 0.9375f);
    }
    EXPECT_EQ(chunk.token_count, input.chunks[i].token_count);
  }
  // In the order asked, skipping ids that do not exist.
  const std::vector<std::int64_t> asked = {(*chunks)[2].id, 999999, (*chunks)[0].id};
  auto by_id = collection.chunks(asked);
  ASSERT_OK(by_id);
  ASSERT_EQ(by_id->size(), 2u);
  EXPECT_EQ((*by_id)[0].text, "Third chunk.");
  EXPECT_EQ((*by_id)[1].text, "First chunk.");

  auto missing = collection.find_document("/docs/other.md");
  ASSERT_OK(missing);
  EXPECT_FALSE(missing->has_value());

  auto removed = collection.remove_document("/docs/guide.md");
  ASSERT_OK(removed);
  EXPECT_TRUE(*removed);
  auto removed_again = collection.remove_document("/docs/guide.md");
  ASSERT_OK(removed_again);
  EXPECT_FALSE(*removed_again);
  EXPECT_EQ(collection.document_count(), 0u);
  EXPECT_EQ(collection.chunk_count(), 0u);
  auto gone = collection.chunks(asked);
  ASSERT_OK(gone);
  EXPECT_TRUE(gone->empty());
  auto bm25 = collection.search_bm25("chunk", 10);
  ASSERT_OK(bm25);
  EXPECT_TRUE(bm25->empty());
  auto vectors = collection.search_vector(input.embedding(0), 10);
  ASSERT_OK(vectors);
  EXPECT_TRUE(vectors->empty());
  auto report = collection.check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
}

TEST(Collection, RejectsEmbeddingsOfTheWrongSize) {
  TempDir temp;
  std::mt19937 rng(2);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  auto input = make_document("a.txt", "txt", {"one", "two"}, kDim, rng);
  input.embeddings.pop_back();
  auto id = put(**opened, input);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ((*opened)->document_count(), 0u);
}

TEST(Collection, ReplacingADocumentReplacesItsChunksTextIndexAndVectors) {
  TempDir temp;
  std::mt19937 rng(3);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  const auto old_version =
      make_document("/kb/a.md", "md", {"alpha bravo tango", "bravo yankee", "old zulu words"}, kDim, rng);
  const auto other = make_document("/kb/b.md", "md", {"unrelated kilo text"}, kDim, rng);
  auto old_id = put(collection, old_version);
  ASSERT_OK(old_id);
  ASSERT_OK(put(collection, other));
  auto old_chunks = collection.document_chunks(*old_id);
  ASSERT_OK(old_chunks);
  std::set<std::int64_t> old_ids;
  for (const auto& chunk : *old_chunks) old_ids.insert(chunk.id);

  auto before = collection.search_bm25("alpha", 10);
  ASSERT_OK(before);
  ASSERT_EQ(before->size(), 1u);

  const auto new_version = make_document("/kb/a.md", "md", {"charlie delta", "echo foxtrot"}, kDim, rng);
  auto new_id = put(collection, new_version);
  ASSERT_OK(new_id);
  EXPECT_NE(*new_id, *old_id);
  EXPECT_EQ(collection.document_count(), 2u);
  EXPECT_EQ(collection.chunk_count(), 3u);

  for (const char* old_word : {"alpha", "bravo", "zulu", "tango"}) {
    auto hits = collection.search_bm25(old_word, 10);
    ASSERT_OK(hits);
    EXPECT_TRUE(hits->empty()) << old_word;
  }
  auto charlie = collection.search_bm25("charlie", 10);
  ASSERT_OK(charlie);
  ASSERT_EQ(charlie->size(), 1u);
  EXPECT_EQ((*charlie)[0].document_id, *new_id);
  EXPECT_FALSE(old_ids.contains((*charlie)[0].chunk_id));

  for (std::size_t i = 0; i < old_version.chunks.size(); ++i) {
    auto hits = collection.search_vector(old_version.embedding(i), 10);
    ASSERT_OK(hits);
    EXPECT_EQ(hits->size(), 3u);
    for (const auto& hit : *hits) EXPECT_FALSE(old_ids.contains(hit.chunk_id)) << hit.chunk_id;
  }
  auto own = collection.search_vector(new_version.embedding(1), 1);
  ASSERT_OK(own);
  ASSERT_EQ(own->size(), 1u);
  EXPECT_EQ((*own)[0].document_id, *new_id);
  EXPECT_NEAR((*own)[0].score, 1.0f, 1e-4);

  auto old_lookup = collection.chunks(std::vector<std::int64_t>(old_ids.begin(), old_ids.end()));
  ASSERT_OK(old_lookup);
  EXPECT_TRUE(old_lookup->empty());
  auto report = collection.check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ(report->chunks, 3u);
  EXPECT_EQ(report->vectors, 3u);
}

// Two openings of one folder have a connection each, as two processes would (the CLI beside a
// server): each one's searches and writes see what the other committed, including after the other
// saved its vector index and trimmed the change log, and neither saves an index missing the other's
// vectors.
TEST(Collection, AnotherWritersCommitsAreCaughtUpBeforeSearchesAndWrites) {
  auto finds_itself = [](const Collection& c, std::span<const float> embedding) {
    auto best = c.search_vector(embedding, 1);
    return best.ok() && best->size() == 1 && std::abs((*best)[0].score - 1.0f) < 1e-4f;
  };
  TempDir temp;
  std::mt19937 rng(5);
  auto server_side = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(server_side);
  auto cli_side = Collection::open(temp.path() / "c");
  ASSERT_OK(cli_side);
  Collection& server = **server_side;
  Collection& cli = **cli_side;

  const auto first = make_document("/kb/first.md", "md", {"zeppelin hangar", "airship mast"}, kDim, rng);
  ASSERT_OK(put(cli, first));
  auto words = server.search_bm25("zeppelin", 5);
  ASSERT_OK(words);
  ASSERT_EQ(words->size(), 1u);
  EXPECT_TRUE(finds_itself(server, first.embedding(1)));
  EXPECT_EQ(server.document_count(), 1u);

  const auto own = make_document("/kb/own.md", "md", {"lighthouse keeper"}, kDim, rng);
  ASSERT_OK(put(server, own));            // a write after the other's commit: caught up inside its transaction
  ASSERT_OK(server.save_vector_index());  // trims the log the CLI side has not read yet
  const auto replaced = make_document("/kb/first.md", "md", {"blimp field"}, kDim, rng);
  ASSERT_OK(put(server, replaced));
  ASSERT_OK(server.save_vector_index());

  auto gone = cli.search_bm25("zeppelin", 5);  // past the trimmed log: caught up by chunk ids
  ASSERT_OK(gone);
  EXPECT_TRUE(gone->empty());
  auto blimp = cli.search_bm25("blimp", 5);
  ASSERT_OK(blimp);
  EXPECT_EQ(blimp->size(), 1u);
  EXPECT_TRUE(finds_itself(cli, own.embedding(0)));
  EXPECT_EQ(cli.chunk_count(), 2u);
  EXPECT_EQ(cli.document_count(), 2u);
  ASSERT_OK(cli.save_vector_index());

  cli_side->reset();
  server_side->reset();
  auto reopened = Collection::open(temp.path() / "c");
  ASSERT_OK(reopened);
  EXPECT_EQ((*reopened)->vector_index_rebuilt_because(), "");
  auto report = (*reopened)->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ(report->vectors, 2u);
}

// --- BM25 ------------------------------------------------------------------------------------------

TEST(Collection, Bm25RanksByRelevanceAndReadsSyntaxAsPlainWords) {
  TempDir temp;
  std::mt19937 rng(4);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  ASSERT_OK(put(collection, make_document("/p/physics.md", "md",
                                          {"Quantum entanglement links particles; quantum states stay correlated.",
                                           "Classical mechanics describes planets and projectiles."},
                                          kDim, rng, {"Physics"})));
  ASSERT_OK(put(collection, make_document("/p/cooking.md", "md",
                                          {"Bread needs flour, water, salt and yeast.",
                                           "A quantum of patience helps when the dough rises."},
                                          kDim, rng, {"Cooking"})));
  ASSERT_OK(
      put(collection, make_document("/p/café.md", "md", {"Le café crème est servi chaud."}, kDim, rng, {"Boissons"})));

  auto hits = collection.search_bm25("quantum entanglement", 10);
  ASSERT_OK(hits);
  ASSERT_EQ(hits->size(), 2u);
  auto best = collection.chunks(std::vector<std::int64_t>{(*hits)[0].chunk_id});
  ASSERT_OK(best);
  EXPECT_NE((*best)[0].text.find("entanglement"), std::string::npos);
  EXPECT_GT((*hits)[0].score, (*hits)[1].score);
  EXPECT_GT((*hits)[1].score, 0.0f);

  // Porter stemming: "particle" finds "particles"; accents folded: "cafe" finds "café".
  auto stemmed = collection.search_bm25("particle", 10);
  ASSERT_OK(stemmed);
  EXPECT_EQ(stemmed->size(), 1u);
  auto folded = collection.search_bm25("CAFE", 10);
  ASSERT_OK(folded);
  EXPECT_EQ(folded->size(), 1u);
  // The heading path is searchable too.
  auto heading = collection.search_bm25("boissons", 10);
  ASSERT_OK(heading);
  EXPECT_EQ(heading->size(), 1u);
  // k limits.
  auto limited = collection.search_bm25("quantum bread planets", 1);
  ASSERT_OK(limited);
  EXPECT_EQ(limited->size(), 1u);

  for (const char* query :
       {"AND", "quantum AND", "\"unbalanced quote", "flour*", "-salt", "NEAR(quantum bread", "(water OR",
        "physics: quantum", "^yeast", "a\"b\"c", "OR OR NOT", "col:umn * + {x}", "'single'"}) {
    auto result = collection.search_bm25(query, 10);
    ASSERT_TRUE(result.ok()) << query << ": " << result.error().message;
  }
  // "AND" is the word "and", not an operator.
  auto and_word = collection.search_bm25("AND", 10);
  ASSERT_OK(and_word);
  EXPECT_EQ(and_word->size(), 2u);  // "...salt and yeast", "...and projectiles"
  auto salt = collection.search_bm25("-salt", 10);
  ASSERT_OK(salt);
  EXPECT_EQ(salt->size(), 1u);

  for (const char* nothing : {"", "   ", "!!! ??? ---", "\"\""}) {
    auto result = collection.search_bm25(nothing, 10);
    ASSERT_OK(result);
    EXPECT_TRUE(result->empty()) << nothing;
  }
}

// --- filters ---------------------------------------------------------------------------------------

TEST(Collection, FiltersRestrictBothSearches) {
  TempDir temp;
  std::mt19937 rng(5);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  struct Doc {
    std::string path, format;
  };
  const std::vector<Doc> docs = {{"/docs/a/x.md", "md"},
                                 {"/docs/a/y.pdf", "pdf"},
                                 {"/docs/b/z.md", "md"},
                                 {"/docs/a_c/w.txt", "txt"},
                                 {"/docs/abc/v.txt", "txt"}};
  std::vector<testing::DocumentInput> inputs;
  std::map<std::int64_t, Doc> by_id;
  for (const auto& doc : docs) {
    inputs.push_back(make_document(doc.path, doc.format, {"shared keyword one", "shared keyword two"}, kDim, rng));
    auto id = put(collection, inputs.back());
    ASSERT_OK(id);
    by_id[*id] = doc;
  }
  auto paths_of = [&](const std::vector<ScoredChunk>& results) {
    std::set<std::string> paths;
    for (const auto& result : results) paths.insert(by_id.at(result.document_id).path);
    return paths;
  };
  const std::vector<float> query = testing::random_unit_vector(kDim, rng);
  auto both = [&](const SearchFilter& filter, const std::set<std::string>& expected) {
    auto bm25 = collection.search_bm25("shared keyword", 100, filter);
    ASSERT_OK(bm25);
    EXPECT_EQ(paths_of(*bm25), expected);
    EXPECT_EQ(bm25->size(), expected.size() * 2);
    auto vectors = collection.search_vector(query, 100, filter);
    ASSERT_OK(vectors);
    EXPECT_EQ(paths_of(*vectors), expected);
    EXPECT_EQ(vectors->size(), expected.size() * 2);
  };
  both({}, {"/docs/a/x.md", "/docs/a/y.pdf", "/docs/b/z.md", "/docs/a_c/w.txt", "/docs/abc/v.txt"});
  both({"/docs/a/", {}}, {"/docs/a/x.md", "/docs/a/y.pdf"});
  both({"/docs/a_", {}}, {"/docs/a_c/w.txt"});  // "_" is a character, not a wildcard
  both({"", {"md"}}, {"/docs/a/x.md", "/docs/b/z.md"});
  both({"", {"pdf", "txt"}}, {"/docs/a/y.pdf", "/docs/a_c/w.txt", "/docs/abc/v.txt"});
  both({"/docs/a/", {"md"}}, {"/docs/a/x.md"});
  both({"/nowhere", {}}, {});
  both({"", {"docx"}}, {});

  // Filtered vector results are the best among the allowed chunks, in order.
  auto filtered = collection.search_vector(query, 3, SearchFilter{"", {"md"}});
  ASSERT_OK(filtered);
  std::vector<std::pair<float, std::int64_t>> expected;
  for (const auto& input : inputs) {
    if (input.document.format != "md") continue;
    auto found = collection.find_document(input.document.path);
    ASSERT_OK(found);
    auto chunks = collection.document_chunks((*found)->id);
    ASSERT_OK(chunks);
    for (std::size_t i = 0; i < input.chunks.size(); ++i) {
      float dot = 0;
      for (std::size_t d = 0; d < kDim; ++d) dot += query[d] * input.embedding(i)[d];
      expected.push_back({dot, (*chunks)[i].id});
    }
  }
  std::sort(expected.rbegin(), expected.rend());
  ASSERT_EQ(filtered->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*filtered)[i].chunk_id, expected[i].second);
    EXPECT_NEAR((*filtered)[i].score, expected[i].first, 1e-4);
  }
}

TEST(Collection, FilteredVectorSearchOverManyChunksFindsTheBestAllowed) {
  TempDir temp;
  std::mt19937 rng(6);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  // Enough chunks that the graph is walked (an index under 10,000 vectors is compared in full), and
  // enough allowed ones that the filter is served by the walk rather than by direct comparison.
  std::vector<std::string> texts(5500, "text");
  const auto md = make_document("/big/a.md", "md", texts, kDim, rng);
  const auto pdf = make_document("/big/b.pdf", "pdf", texts, kDim, rng);
  auto md_id = put(collection, md);
  ASSERT_OK(md_id);
  ASSERT_OK(put(collection, pdf));
  auto md_chunks = collection.document_chunks(*md_id);
  ASSERT_OK(md_chunks);

  std::size_t agreed = 0, total = 0;
  for (int q = 0; q < 20; ++q) {
    const auto query = testing::random_unit_vector(kDim, rng);
    auto found = collection.search_vector(query, 10, SearchFilter{"", {"md"}});
    ASSERT_OK(found);
    ASSERT_EQ(found->size(), 10u);
    std::vector<std::pair<float, std::int64_t>> exact;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      float dot = 0;
      for (std::size_t d = 0; d < kDim; ++d) dot += query[d] * md.embedding(i)[d];
      exact.push_back({dot, (*md_chunks)[i].id});
    }
    std::partial_sort(exact.begin(), exact.begin() + 10, exact.end(), std::greater<>());
    std::set<std::int64_t> truth;
    for (int i = 0; i < 10; ++i) truth.insert(exact[i].second);
    for (const auto& hit : *found) {
      EXPECT_EQ(hit.document_id, *md_id);
      agreed += truth.contains(hit.chunk_id);
    }
    total += 10;
  }
  EXPECT_GE(double(agreed) / double(total), 0.95);
}

// --- vector recall ---------------------------------------------------------------------------------

TEST(Collection, VectorSearchRecallAt10IsAtLeast098On5000RandomVectors) {
  TempDir temp;
  constexpr std::size_t kDimension = 384, kDocuments = 50, kChunksPerDocument = 100, kQueries = 200;
  std::mt19937 rng(7);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info(kDimension));
  ASSERT_OK(opened);
  Collection& collection = **opened;
  std::vector<std::string> texts(kChunksPerDocument, "chunk");
  std::vector<std::vector<float>> stored;
  for (std::size_t d = 0; d < kDocuments; ++d) {
    const auto input = make_document("/r/" + std::to_string(d), "txt", texts, kDimension, rng);
    ASSERT_OK(put(collection, input));
    for (std::size_t i = 0; i < kChunksPerDocument; ++i) {
      stored.emplace_back(input.embedding(i).begin(), input.embedding(i).end());
    }
  }
  ASSERT_EQ(collection.chunk_count(), kDocuments * kChunksPerDocument);

  std::size_t hits = 0;
  for (std::size_t q = 0; q < kQueries; ++q) {
    const auto query = testing::random_unit_vector(kDimension, rng);
    auto approximate = collection.search_vector(query, 10);
    auto exact = collection.search_vector_exact(query, 10);
    ASSERT_OK(approximate);
    ASSERT_OK(exact);
    ASSERT_EQ(exact->size(), 10u);
    ASSERT_EQ(approximate->size(), 10u);
    const auto truth = ids_of(*exact);
    for (const auto& hit : *approximate) hits += std::count(truth.begin(), truth.end(), hit.chunk_id);
    if (q < 5) {
      // The exact search is exact: its best score is the best dot product over what was stored.
      float best = -2;
      for (const auto& vector : stored) {
        float dot = 0;
        for (std::size_t d = 0; d < kDimension; ++d) dot += vector[d] * query[d];
        best = std::max(best, dot);
      }
      EXPECT_NEAR((*exact)[0].score, best, 1e-4);
      EXPECT_GE((*exact)[0].score, (*exact)[9].score);
    }
  }
  // An index this small is compared in full (VectorIndexSettings::exact_search_below), so this pins
  // the collection's plumbing; vector_index_test measures the graph itself.
  const double recall = double(hits) / double(kQueries * 10);
  std::printf("recall@10 over %zu random unit vectors (dimension %zu): %.4f\n", stored.size(), kDimension, recall);
  RecordProperty("recall_at_10", std::to_string(recall));
  EXPECT_GE(recall, 0.98);
}

// --- persistence and recovery ----------------------------------------------------------------------

// Three documents with distinct words; returns their inputs.
std::vector<testing::DocumentInput> put_sample(Collection& collection, std::mt19937& rng, int first = 0,
                                               int count = 3) {
  std::vector<testing::DocumentInput> inputs;
  for (int d = first; d < first + count; ++d) {
    inputs.push_back(make_document("/s/doc" + std::to_string(d) + ".txt", "txt",
                                   {"word" + std::to_string(d) + "a common", "word" + std::to_string(d) + "b common",
                                    "word" + std::to_string(d) + "c common"},
                                   kDim, rng));
    auto id = put(collection, inputs.back());
    EXPECT_TRUE(id.ok()) << id.error().message;
  }
  return inputs;
}

// Every chunk of `inputs` is found by its own embedding and its own word.
void expect_searchable(const Collection& collection, const std::vector<testing::DocumentInput>& inputs) {
  for (const auto& input : inputs) {
    for (std::size_t i = 0; i < input.chunks.size(); ++i) {
      auto by_vector = collection.search_vector(input.embedding(i), 1);
      ASSERT_OK(by_vector);
      ASSERT_EQ(by_vector->size(), 1u) << input.document.path;
      EXPECT_NEAR((*by_vector)[0].score, 1.0f, 1e-4) << input.document.path << " chunk " << i;
      const std::string word = input.chunks[i].text.substr(0, input.chunks[i].text.find(' '));
      auto by_word = collection.search_bm25(word, 5);
      ASSERT_OK(by_word);
      ASSERT_EQ(by_word->size(), 1u) << word;
      EXPECT_EQ((*by_word)[0].chunk_id, (*by_vector)[0].chunk_id) << word;
    }
  }
}

TEST(Collection, ReopeningGivesIdenticalResults) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  std::mt19937 rng(8);
  std::vector<std::vector<float>> queries;
  for (int q = 0; q < 10; ++q) queries.push_back(testing::random_unit_vector(kDim, rng));
  std::vector<std::vector<ScoredChunk>> vector_before, bm25_before;
  std::vector<testing::DocumentInput> inputs;
  {
    auto opened = Collection::open_or_create(dir, test_info());
    ASSERT_OK(opened);
    inputs = put_sample(**opened, rng, 0, 20);
    ASSERT_OK((*opened)->remove_document("/s/doc3.txt"));
    for (const auto& query : queries) {
      auto found = (*opened)->search_vector(query, 10);
      ASSERT_OK(found);
      vector_before.push_back(*found);
      auto words = (*opened)->search_bm25("common word4a word7c", 10);
      ASSERT_OK(words);
      bm25_before.push_back(*words);
    }
  }  // closing saves the vector index and trims the change log
  EXPECT_TRUE(std::filesystem::exists(dir / "vectors.index"));
  EXPECT_EQ(raw_count(dir / "kotae.db", "SELECT count(*) FROM vector_log"), 0);

  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  EXPECT_EQ((*reopened)->document_count(), 19u);
  EXPECT_EQ((*reopened)->chunk_count(), 57u);
  for (std::size_t q = 0; q < queries.size(); ++q) {
    auto found = (*reopened)->search_vector(queries[q], 10);
    ASSERT_OK(found);
    ASSERT_EQ(found->size(), vector_before[q].size());
    for (std::size_t i = 0; i < found->size(); ++i) {
      EXPECT_EQ((*found)[i].chunk_id, vector_before[q][i].chunk_id);
      EXPECT_EQ((*found)[i].document_id, vector_before[q][i].document_id);
      EXPECT_FLOAT_EQ((*found)[i].score, vector_before[q][i].score);
    }
    auto words = (*reopened)->search_bm25("common word4a word7c", 10);
    ASSERT_OK(words);
    ASSERT_EQ(words->size(), bm25_before[q].size());
    for (std::size_t i = 0; i < words->size(); ++i) {
      EXPECT_EQ((*words)[i].chunk_id, bm25_before[q][i].chunk_id);
      EXPECT_FLOAT_EQ((*words)[i].score, bm25_before[q][i].score);
    }
  }
  inputs.erase(inputs.begin() + 3);
  expect_searchable(**reopened, inputs);
}

// Runs `body` in a child process that ends with _exit(0): no destructor runs, so nothing is saved
// or closed, as when the process is killed.
template <class Body>
void in_crashing_child(Body body) {
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed, status " << status;
}

TEST(Collection, ACrashBeforeTheIndexIsSavedLosesNothingAcknowledged) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  std::mt19937 rng(9);
  std::vector<testing::DocumentInput> inputs;
  { ASSERT_OK(Collection::open_or_create(dir, test_info())); }
  in_crashing_child([&] {
    auto opened = Collection::open(dir);
    if (!opened) _exit(2);
    for (int d = 0; d < 10; ++d) {
      auto input = make_document("/s/doc" + std::to_string(d) + ".txt", "txt",
                                 {"word" + std::to_string(d) + "a common"}, kDim, rng);
      if (!put(**opened, input)) _exit(3);
    }
    if (!(*opened)->remove_document("/s/doc2.txt")) _exit(4);
    _exit(0);  // no destructors, no vector index save
  });
  // vectors.index is the empty one saved when the collection was created; the log holds the rest.
  EXPECT_GT(raw_count(dir / "kotae.db", "SELECT count(*) FROM vector_log"), 0);

  // The child's documents, rebuilt with the same random sequence.
  std::mt19937 replay(9);
  for (int d = 0; d < 10; ++d) {
    inputs.push_back(make_document("/s/doc" + std::to_string(d) + ".txt", "txt",
                                   {"word" + std::to_string(d) + "a common"}, kDim, replay));
  }
  inputs.erase(inputs.begin() + 2);

  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  auto report = (*reopened)->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ(report->chunks, 9u);
  EXPECT_EQ((*reopened)->document_count(), 9u);
  expect_searchable(**reopened, inputs);
}

TEST(Collection, ACrashAfterASaveReplaysOnlyTheLaterChanges) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  { ASSERT_OK(Collection::open_or_create(dir, test_info())); }
  in_crashing_child([&] {
    std::mt19937 rng(10);
    auto opened = Collection::open(dir);
    if (!opened) _exit(2);
    (void)put_sample(**opened, rng, 0, 6);
    if (!(*opened)->save_vector_index()) _exit(3);
    (void)put_sample(**opened, rng, 6, 6);                     // added after the save
    if (!(*opened)->remove_document("/s/doc1.txt")) _exit(4);  // saved, then removed
    if (!(*opened)->remove_document("/s/doc8.txt")) _exit(5);  // added then removed, never saved
    auto again = make_document("/s/doc0.txt", "txt", {"replacement words"}, kDim, rng);
    if (!put(**opened, again)) _exit(6);  // saved, then replaced
    _exit(0);
  });
  std::mt19937 rng(10);
  std::vector<testing::DocumentInput> inputs;
  {
    // Regenerate the same inputs without a collection: make_document draws the same numbers.
    for (int d = 0; d < 12; ++d) {
      inputs.push_back(make_document("/s/doc" + std::to_string(d) + ".txt", "txt",
                                     {"word" + std::to_string(d) + "a common", "word" + std::to_string(d) + "b common",
                                      "word" + std::to_string(d) + "c common"},
                                     kDim, rng));
    }
  }
  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  auto report = (*reopened)->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ((*reopened)->document_count(), 10u);
  EXPECT_EQ(report->chunks, 9u * 3u + 1u);
  EXPECT_EQ(report->vectors, report->chunks);
  std::vector<testing::DocumentInput> remaining;
  for (int d : {2, 3, 4, 5, 6, 7, 9, 10, 11}) remaining.push_back(inputs[d]);
  expect_searchable(**reopened, remaining);
  auto replaced = (*reopened)->search_bm25("word0a", 5);
  ASSERT_OK(replaced);
  EXPECT_TRUE(replaced->empty());
  auto replacement = (*reopened)->search_bm25("replacement", 5);
  ASSERT_OK(replacement);
  EXPECT_EQ(replacement->size(), 1u);
}

TEST(Collection, ADamagedVectorIndexIsRebuiltOnOpen) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  std::mt19937 rng(11);
  std::vector<testing::DocumentInput> inputs;
  {
    auto opened = Collection::open_or_create(dir, test_info());
    ASSERT_OK(opened);
    inputs = put_sample(**opened, rng, 0, 5);
  }
  const auto index = dir / "vectors.index";
  ASSERT_TRUE(std::filesystem::exists(index));
  const auto size = std::filesystem::file_size(index);

  auto reopen_and_check = [&](const char* what) {
    auto reopened = Collection::open(dir);
    ASSERT_OK(reopened);
    auto report = (*reopened)->check();
    ASSERT_OK(report);
    EXPECT_TRUE(report->ok()) << what << ": " << report->details;
    EXPECT_EQ(report->vectors, 15u) << what;
    expect_searchable(**reopened, inputs);
  };
  {
    std::ofstream garbage(index, std::ios::binary | std::ios::trunc);
    std::mt19937 noise(12);
    for (std::uintmax_t i = 0; i < size; ++i) garbage.put(static_cast<char>(noise()));
  }
  reopen_and_check("garbage");
  EXPECT_GT(std::filesystem::file_size(index), 40u);  // rebuilt and saved again
  std::filesystem::resize_file(index, size / 2);
  reopen_and_check("truncated");
  {
    // One flipped byte in the middle of the payload.
    std::fstream file(index, std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(static_cast<std::streamoff>(size / 2));
    const char byte = static_cast<char>(file.get());
    file.seekp(static_cast<std::streamoff>(size / 2));
    file.put(static_cast<char>(byte ^ 0x5a));
  }
  reopen_and_check("one byte flipped");
  std::filesystem::remove(index);
  reopen_and_check("missing");

  {
    // The file an older Kotae left (format version 2: a 40-byte header, magic and version first, then
    // hnswlib 0.6's graph as it read and wrote it): rebuilt from the database on the first open, which
    // says so, and saved in the current format, which the next open loads.
    std::vector<char> old_file(40 + static_cast<std::size_t>(size), '\0');
    std::memcpy(old_file.data(), "KOTAEVEC", 8);
    const std::uint32_t version = 2, dimension = kDim;
    std::memcpy(old_file.data() + 8, &version, sizeof version);
    std::memcpy(old_file.data() + 12, &dimension, sizeof dimension);
    std::ofstream out(index, std::ios::binary | std::ios::trunc);
    out.write(old_file.data(), static_cast<std::streamsize>(old_file.size()));
  }
  {
    auto reopened = Collection::open(dir);
    ASSERT_OK(reopened);
    const std::string& because = (*reopened)->vector_index_rebuilt_because();
    EXPECT_NE(because.find("format version 2, written by an older Kotae"), std::string::npos) << because;
    expect_searchable(**reopened, inputs);
  }
  auto upgraded = Collection::open(dir);
  ASSERT_OK(upgraded);
  EXPECT_EQ((*upgraded)->vector_index_rebuilt_because(), "");
  expect_searchable(**upgraded, inputs);
}

TEST(Collection, CheckReportsChunksAndVectorsThatDisagree) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  const auto database = dir / "kotae.db";
  std::mt19937 rng(13);
  auto opened = Collection::open_or_create(dir, test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  (void)put_sample(collection, rng, 0, 3);
  auto clean = collection.check();
  ASSERT_OK(clean);
  EXPECT_TRUE(clean->ok()) << clean->details;
  EXPECT_TRUE(clean->integrity_ok);
  EXPECT_TRUE(clean->fts_ok);
  EXPECT_EQ(clean->documents, 3u);

  // Another program deletes a chunk: the database loses it, the open collection's index does not.
  ASSERT_EQ(raw_sql(database, "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)"), "");
  auto stale = collection.check();
  ASSERT_OK(stale);
  EXPECT_FALSE(stale->ok());
  EXPECT_TRUE(stale->fts_ok);  // the triggers kept the FTS rows in step
  EXPECT_EQ(stale->chunks, 8u);
  EXPECT_EQ(stale->vectors, 9u);
  EXPECT_EQ(stale->vectors_without_chunk, 1u);
  EXPECT_EQ(stale->chunks_without_vector, 0u);
  EXPECT_NE(stale->details.find("vectors without a chunk"), std::string::npos) << stale->details;

  // ... and adds one.
  std::string blob(kDim * 8, '0');  // kDim float32 zeros as hex
  ASSERT_EQ(raw_sql(database,
                    "INSERT INTO chunks(document_id, ordinal, begin, end, text, embedding) "
                    "SELECT min(id), 99, 0, 4, 'sneaky', x'" +
                        blob + "' FROM documents"),
            "");
  auto both = collection.check();
  ASSERT_OK(both);
  EXPECT_EQ(both->chunks_without_vector, 1u);
  EXPECT_EQ(both->vectors_without_chunk, 1u);

  ASSERT_OK(collection.rebuild_vector_index());
  auto rebuilt = collection.check();
  ASSERT_OK(rebuilt);
  EXPECT_TRUE(rebuilt->ok()) << rebuilt->details;
  EXPECT_EQ(rebuilt->vectors, 9u);
}

TEST(Collection, CheckReportsADamagedTextIndexAndOpenRepairsALostChangeLog) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  const auto database = dir / "kotae.db";
  std::mt19937 rng(14);
  { ASSERT_OK(Collection::open_or_create(dir, test_info())); }
  in_crashing_child([&] {
    auto opened = Collection::open(dir);
    if (!opened) _exit(2);
    std::mt19937 child_rng(14);
    (void)put_sample(**opened, child_rng, 0, 4);
    _exit(0);
  });
  // The change log is lost as well: the index on disk (none) cannot be caught up from it, so
  // opening sees the vector count disagree with the chunks and rebuilds.
  ASSERT_EQ(raw_sql(database, "DELETE FROM vector_log"), "");
  {
    auto reopened = Collection::open(dir);
    ASSERT_OK(reopened);
    auto report = (*reopened)->check();
    ASSERT_OK(report);
    EXPECT_TRUE(report->ok()) << report->details;
    EXPECT_EQ(report->vectors, 12u);
  }
  // A chunk's text changed without its FTS row (the trigger dropped first): the FTS check fails.
  ASSERT_EQ(raw_sql(database,
                    "DROP TRIGGER chunks_after_update; "
                    "UPDATE chunks SET text = 'entirely different' WHERE id = (SELECT min(id) FROM chunks)"),
            "");
  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  auto report = (*reopened)->check();
  ASSERT_OK(report);
  EXPECT_FALSE(report->fts_ok);
  EXPECT_TRUE(report->integrity_ok);
  EXPECT_FALSE(report->ok());
  EXPECT_NE(report->details.find("FTS"), std::string::npos) << report->details;
}

TEST(Collection, AFullDiskIsAnIoErrorThatLeavesTheCollectionIntact) {
  TempDir temp;
  const auto dir = temp.path() / "c";
  std::mt19937 rng(15);
  std::vector<testing::DocumentInput> inputs;
  {
    auto opened = Collection::open_or_create(dir, test_info());
    ASSERT_OK(opened);
    inputs = put_sample(**opened, rng, 0, 3);
  }
  std::uintmax_t largest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    largest = std::max(largest, entry.file_size());
  }

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    std::string outcome = "open failed";
    auto opened = Collection::open(dir);
    if (opened) {
      signal(SIGXFSZ, SIG_IGN);
      rlimit limit{};
      limit.rlim_cur = limit.rlim_max = largest + 64 * 1024;
      setrlimit(RLIMIT_FSIZE, &limit);
      std::mt19937 child_rng(16);
      std::vector<std::string> texts(200, std::string(20000, 'x'));  // 4 MB of text
      auto big = make_document("/s/big.txt", "txt", texts, kDim, child_rng);
      auto put_big = put(**opened, big);
      outcome = put_big.ok() ? "ok" : std::string(to_string(put_big.error().code)) + "|" + put_big.error().message;
    }
    (void)!write(pipe_fds[1], outcome.data(), outcome.size());
    close(pipe_fds[1]);
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string outcome;
  char buffer[4096];
  for (ssize_t got; (got = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) outcome.append(buffer, got);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;

  EXPECT_EQ(outcome.substr(0, 3), "io|") << outcome;
  EXPECT_NE(outcome.find("disk full"), std::string::npos) << outcome;

  auto reopened = Collection::open(dir);
  ASSERT_OK(reopened);
  auto report = (*reopened)->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ((*reopened)->document_count(), 3u);
  auto big = (*reopened)->find_document("/s/big.txt");
  ASSERT_OK(big);
  EXPECT_FALSE(big->has_value());
  expect_searchable(**reopened, inputs);
}

// --- concurrency -----------------------------------------------------------------------------------

TEST(Collection, SearchesRunOnSeveralThreadsWhileAWriterWrites) {
  TempDir temp;
  std::mt19937 rng(17);
  auto opened = Collection::open_or_create(temp.path() / "c", test_info());
  ASSERT_OK(opened);
  Collection& collection = **opened;
  const auto inputs = put_sample(collection, rng, 0, 10);
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0}, bm25_searches{0}, vector_searches{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 local(100 + t);
      while (writing) {
        if (t % 2 == 0) {
          auto found = collection.search_bm25("common word3b", 5);
          if (!found || found->empty()) ++failures;
          ++bm25_searches;
        } else {
          auto found = collection.search_vector(testing::random_unit_vector(kDim, local), 5);
          if (!found || found->size() != 5) ++failures;
          ++vector_searches;
        }
      }
    });
  }
  std::mt19937 writer_rng(18);
  for (int round = 0; round < 30; ++round) {
    auto input =
        make_document("/w/" + std::to_string(round % 7), "txt", {"writer text", "more writer text"}, kDim, writer_rng);
    auto id = put(collection, input);
    EXPECT_TRUE(id.ok()) << id.error().message;
  }
  writing = false;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(failures, 0);
  EXPECT_GT(bm25_searches, 0);
  EXPECT_GT(vector_searches, 0);
  auto report = collection.check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ(collection.document_count(), 17u);
}

}  // namespace
}  // namespace kotae::store
