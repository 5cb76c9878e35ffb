// Searches restricted to chosen documents and by their metadata (store/metadata_filter, applied in
// store/derived_indexes before ranking), on both record stores: SQLite and the PostgreSQL fixture.
// Each filter returns exactly the matching documents' chunks from BM25 and from the vectors; a filter
// allowing two documents with k=5 returns 5 hits (BM25, vector and hybrid) although forty other
// documents rank above them; unknown fields and wrong types are errors naming the field; and a
// replica that catches up, or a collection opened again, filters the same.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "search/hybrid_retriever.h"
#include "store/collection.h"
#include "store/metadata_filter.h"
#include "store/postgres_record_store.h"
#include "support/store_backend_test.h"
#include "tests/store/store_test_support.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

constexpr std::size_t kDim = 16;

CollectionInfo test_info() {
  CollectionInfo info;
  info.embedder_id = "test-embedder/fp32";
  info.dimension = kDim;
  info.chunk_tokens = 256;
  info.overlap_tokens = 32;
  return info;
}

std::shared_ptr<const MetadataFilter> where(const std::string& text) {
  auto parsed = MetadataFilter::parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : nullptr;
}

SearchFilter filter_where(const std::string& text) {
  SearchFilter filter;
  filter.where = where(text);
  return filter;
}

SearchFilter filter_documents(std::vector<std::int64_t> ids) {
  SearchFilter filter;
  filter.documents = std::move(ids);
  return filter;
}

class FilteredSearchTest : public kotae::testing::StoreBackendTest {
 protected:
  void SetUp() override {
    StoreBackendTest::SetUp();
    if (!sqlite()) {
      url_ = postgres_url(KOTAE_TEST_POSTGRES_URL_FILE);
      ASSERT_FALSE(url_.empty());
    }
    auto opened = open_collection("a.index");
    ASSERT_OK(opened);
    collection_ = std::move(*opened);
    std::mt19937 rng(11);
    query_ = testing::random_unit_vector(kDim, rng);
    add("/docs/hr/a.md", "md",
        R"({"dept":"hr","year":2024,"tags":["policy","leave"],"draft":false,"date":"2024-03-01","author":{"name":"Ana"}})",
        3, rng);
    add("/docs/hr/b.txt", "txt",
        R"({"dept":"hr","year":2023,"tags":["policy"],"draft":true,"date":"2023-11-20T10:00:00Z","author":{"name":"Ben"}})",
        3, rng);
    add("/docs/legal/c.md", "md",
        R"({"dept":"legal","year":2024,"tags":["contract"],"draft":false,"date":"2024-06-15"})", 2, rng);
    add("/docs/eng/d.md", "md", R"({"dept":"eng","year":2025})", 2, rng);
    add("/docs/e.md", "md", "{}", 1, rng);
    // Forty documents that outrank all of the above for the query's words and vector: a filter that
    // ranked first and filtered after would find none of the documents it allows in its top k.
    for (int i = 0; i < 40; ++i) {
      add("/docs/ops/f" + std::to_string(i) + ".md", "md", R"({"dept":"ops","year":2020})", 3, rng, true);
    }
  }
  void TearDown() override {
    collection_.reset();
    StoreBackendTest::TearDown();
  }

  // The collection over this test's records: a folder (SQLite) or the fixture's database, with a
  // vector snapshot of its own (a replica).
  Result<std::unique_ptr<Collection>> open_collection(const std::string& snapshot) {
    if (sqlite()) return Collection::open_or_create(folder_ / "notes", test_info());
    const CollectionInfo info = test_info();
    auto records = PostgresRecordStore::open(std::make_shared<PgPool>(url_), acme_, "notes", &info);
    if (!records) return records.error();
    return Collection::open(std::move(*records), folder_ / snapshot);
  }

  void add(const std::string& path, const std::string& format, const std::string& metadata, int chunks,
           std::mt19937& rng, bool near_the_query = false) {
    std::vector<std::string> texts;
    for (int i = 0; i < chunks; ++i) {
      texts.push_back(near_the_query ? "shared keyword shared keyword, filler " + std::to_string(i)
                                     : "shared keyword in " + path + " part " + std::to_string(i));
    }
    auto input = testing::make_document(path, format, texts, kDim, rng);
    input.document.metadata_json = metadata;
    if (near_the_query) {  // the query's vector, a little noise added
      for (int c = 0; c < chunks; ++c) {
        auto noise = testing::random_unit_vector(kDim, rng);
        double norm = 0;
        for (std::size_t d = 0; d < kDim; ++d) {
          float& x = input.embeddings[static_cast<std::size_t>(c) * kDim + d];
          x = query_[d] + 0.05f * noise[d];
          norm += double(x) * x;
        }
        for (std::size_t d = 0; d < kDim; ++d) {
          input.embeddings[static_cast<std::size_t>(c) * kDim + d] /= static_cast<float>(std::sqrt(norm));
        }
      }
    }
    auto id = testing::put(*collection_, input);
    ASSERT_OK(id);
    ids_[path] = *id;
    paths_[*id] = path;
  }

  // The documents (by path) whose chunks a search returned, each with its count of chunks.
  std::map<std::string, int> found(const std::vector<ScoredChunk>& hits) const {
    std::map<std::string, int> out;
    for (const auto& hit : hits) ++out[paths_.count(hit.document_id) ? paths_.at(hit.document_id) : "?"];
    return out;
  }

  // Both legs, every allowed chunk (k far above them all): the documents and chunk counts found.
  void expect_exactly(const Collection& collection, const SearchFilter& filter,
                      const std::map<std::string, int>& expected, const std::string& what) {
    auto bm25 = collection.search_bm25("shared keyword", 1000, filter);
    ASSERT_OK(bm25);
    EXPECT_EQ(found(*bm25), expected) << "bm25, " << what;
    auto vectors = collection.search_vector(query_, 1000, filter);
    ASSERT_OK(vectors);
    EXPECT_EQ(found(*vectors), expected) << "vector, " << what;
  }

  std::string url_;
  std::unique_ptr<Collection> collection_;
  std::vector<float> query_;
  std::map<std::string, std::int64_t> ids_;
  std::map<std::int64_t, std::string> paths_;
};

const std::map<std::string, int> kA = {{"/docs/hr/a.md", 3}};
const std::map<std::string, int> kB = {{"/docs/hr/b.txt", 3}};
const std::map<std::string, int> kHr = {{"/docs/hr/a.md", 3}, {"/docs/hr/b.txt", 3}};

TEST_P(FilteredSearchTest, EachFilterReturnsExactlyTheMatchingDocumentsChunks) {
  ASSERT_TRUE(collection_);
  const Collection& c = *collection_;
  expect_exactly(c, filter_where("dept = \"hr\""), kHr, "dept");
  expect_exactly(c, filter_where("year >= 2024 and not draft = true"),
                 {{"/docs/hr/a.md", 3}, {"/docs/legal/c.md", 2}, {"/docs/eng/d.md", 2}}, "year and not draft");
  expect_exactly(c, filter_where("draft != true and year > 2023"),
                 {{"/docs/hr/a.md", 3}, {"/docs/legal/c.md", 2}, {"/docs/eng/d.md", 2}}, "!=");
  expect_exactly(c, filter_where("tags has \"policy\""), kHr, "has");
  expect_exactly(c, filter_where("tags has all (\"policy\", \"leave\")"), kA, "has all");
  expect_exactly(c, filter_where("dept in (\"legal\", \"eng\")"), {{"/docs/legal/c.md", 2}, {"/docs/eng/d.md", 2}},
                 "in");
  expect_exactly(c, filter_where("date >= 2024-01-01"), {{"/docs/hr/a.md", 3}, {"/docs/legal/c.md", 2}}, "date >=");
  expect_exactly(c, filter_where("date < 2024-01-01"), kB, "date <");
  expect_exactly(c, filter_where("date = 2023-11-20"), kB, "a date-time on that day");
  expect_exactly(c, filter_where("author.name = \"Ben\""), kB, "nested key");
  expect_exactly(c, filter_where("(dept = \"hr\" or dept = \"legal\") and year = 2024"),
                 {{"/docs/hr/a.md", 3}, {"/docs/legal/c.md", 2}}, "parentheses");
  expect_exactly(c, filter_where("dept = \"nobody\""), {}, "no match");

  // Chosen documents (an id no document has matches nothing), alone and with the other filters.
  expect_exactly(c, filter_documents({ids_["/docs/legal/c.md"], ids_["/docs/e.md"], 99'999'999}),
                 {{"/docs/legal/c.md", 2}, {"/docs/e.md", 1}}, "documents");
  expect_exactly(c, filter_documents({99'999'999}), {}, "an unknown document");
  SearchFilter chosen_and_where = filter_documents({ids_["/docs/hr/a.md"], ids_["/docs/hr/b.txt"]});
  chosen_and_where.where = where("year = 2024");
  expect_exactly(c, chosen_and_where, kA, "documents and where");
  SearchFilter prefix_and_where("/docs/hr/");
  prefix_and_where.where = where("draft = true");
  expect_exactly(c, prefix_and_where, kB, "path prefix and where");
  SearchFilter format_and_where("", {"md"});
  format_and_where.where = where("dept = \"hr\"");
  expect_exactly(c, format_and_where, kA, "format and where");
}

TEST_P(FilteredSearchTest, TwoAllowedDocumentsFillKFromEveryLeg) {
  ASSERT_TRUE(collection_);
  const Collection& c = *collection_;
  // Unfiltered, the forty others hold the whole top 5 of both legs.
  auto top_bm25 = c.search_bm25("shared keyword", 5);
  ASSERT_OK(top_bm25);
  auto top_vector = c.search_vector(query_, 5);
  ASSERT_OK(top_vector);
  for (const auto& hits : {*top_bm25, *top_vector}) {
    for (const auto& hit : hits) EXPECT_TRUE(paths_.at(hit.document_id).starts_with("/docs/ops/"));
  }

  auto search = search::HybridRetriever::create(c, nullptr);
  ASSERT_OK(search);
  for (const SearchFilter& filter :
       {filter_where("dept = \"hr\""), filter_documents({ids_["/docs/hr/a.md"], ids_["/docs/hr/b.txt"]})}) {
    auto bm25 = c.search_bm25("shared keyword", 5, filter);
    ASSERT_OK(bm25);
    EXPECT_EQ(bm25->size(), 5u);
    auto vectors = c.search_vector(query_, 5, filter);
    ASSERT_OK(vectors);
    EXPECT_EQ(vectors->size(), 5u);
    for (const auto& hits : {*bm25, *vectors}) {
      for (const auto& hit : hits) EXPECT_TRUE(kHr.contains(paths_.at(hit.document_id))) << paths_.at(hit.document_id);
    }
    for (const auto mode : {search::SearchMode::bm25, search::SearchMode::vector, search::SearchMode::hybrid}) {
      search::SearchOptions options;
      options.mode = mode;
      options.k = 5;
      options.filter = filter;
      options.rerank = false;
      auto result = search->search_embedded("shared keyword", query_, options);
      ASSERT_OK(result);
      EXPECT_EQ(result->hits.size(), 5u) << search::to_string(mode);
      for (const auto& hit : result->hits) EXPECT_TRUE(kHr.contains(hit.document_path)) << hit.document_path;
    }
  }
}

TEST_P(FilteredSearchTest, UnknownFieldsAndWrongTypesAreErrorsNamingThem) {
  ASSERT_TRUE(collection_);
  const Collection& c = *collection_;
  auto expect_error = [&](const std::string& text, const std::string& message) {
    const SearchFilter filter = filter_where(text);
    auto checked = c.check_filter(filter);
    ASSERT_FALSE(checked.ok()) << text;
    EXPECT_EQ(checked.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(checked.error().message, message);
    auto bm25 = c.search_bm25("shared keyword", 5, filter);
    ASSERT_FALSE(bm25.ok()) << text;
    EXPECT_EQ(bm25.error().message, message);
    auto vectors = c.search_vector(query_, 5, filter);
    ASSERT_FALSE(vectors.ok()) << text;
    EXPECT_EQ(vectors.error().message, message);
  };
  expect_error("colour = \"red\"", "no document of this collection has the field 'colour'");
  expect_error("year = \"2024\"", "'year' holds numbers, not a string like \"2024\"");
  expect_error("tags >= 2", "'tags' holds lists of strings: '>=' on it needs numbers or dates, not 2");
  expect_error("author = \"Ana\"", "'author' holds objects: name one of their keys ('author.KEY')");
  EXPECT_TRUE(c.check_filter(filter_where("author.name = \"Ana\" and date >= 2024-01-01")).ok());
}

TEST_P(FilteredSearchTest, AReplicaAndAReopenedCollectionFilterTheSame) {
  ASSERT_TRUE(collection_);
  auto replica = open_collection("b.index");
  ASSERT_OK(replica);
  Collection& b = **replica;
  expect_exactly(b, filter_where("dept = \"hr\""), kHr, "replica at open");

  // Changes made through the first collection reach the replica's metadata when it catches up.
  auto removed = collection_->remove_document("/docs/hr/b.txt");
  ASSERT_OK(removed);
  std::mt19937 rng(5);
  add("/docs/hr/a.md", "md", R"({"dept":"finance","year":2026,"owner":"Zoe"})", 2, rng);  // replaced
  ASSERT_OK(b.catch_up());
  for (Collection* c : {collection_.get(), &b}) {
    expect_exactly(*c, filter_where("dept = \"hr\""), {}, "hr gone");
    expect_exactly(*c, filter_where("dept = \"finance\" and owner = \"Zoe\""), {{"/docs/hr/a.md", 2}}, "replaced");
    auto gone = c->check_filter(filter_where("author.name = \"Ben\""));  // Ana and Ben left with their documents
    ASSERT_FALSE(gone.ok());
    EXPECT_EQ(gone.error().message, "no document of this collection has the field 'author.name'");
  }
  replica->reset();

  collection_.reset();
  auto reopened = open_collection("c.index");
  ASSERT_OK(reopened);
  expect_exactly(**reopened, filter_where("year >= 2024 and not draft = true"),
                 {{"/docs/hr/a.md", 2}, {"/docs/legal/c.md", 2}, {"/docs/eng/d.md", 2}}, "reopened");
  expect_exactly(**reopened, filter_documents({ids_["/docs/hr/a.md"]}), {{"/docs/hr/a.md", 2}}, "new id");
}

// Metadata changed in place (Collection::update_document_metadata): this process's indexes take it at
// once (DerivedIndexes::apply_metadata), a replica's when it catches up; the field summary follows.
TEST_P(FilteredSearchTest, MetadataChangedInPlaceIsFilteredAtOnceAndByAReplica) {
  ASSERT_TRUE(collection_);
  auto replica = open_collection("b.index");
  ASSERT_OK(replica);
  Collection& b = **replica;
  auto changed = collection_->update_document_metadata(ids_["/docs/legal/c.md"], R"({"dept":"hr","colour":"red"})");
  ASSERT_OK(changed);
  ASSERT_TRUE(*changed);
  ASSERT_OK(b.catch_up());
  for (Collection* c : {collection_.get(), &b}) {
    expect_exactly(*c, filter_where("dept = \"hr\""),
                   {{"/docs/hr/a.md", 3}, {"/docs/hr/b.txt", 3}, {"/docs/legal/c.md", 2}}, "changed in place");
    expect_exactly(*c, filter_where("colour = \"red\""), {{"/docs/legal/c.md", 2}}, "a new field");
    auto gone = c->check_filter(filter_where("tags has \"contract\""));
    ASSERT_TRUE(gone.ok());  // 'tags' is still a's and b's
    expect_exactly(*c, filter_where("tags has \"contract\""), {}, "its old tags");
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FilteredSearchTest, ::testing::Values("sqlite", "postgres"),
                         kotae::testing::backend_name);

}  // namespace
}  // namespace kotae::store
