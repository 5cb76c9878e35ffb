// The collection over the PostgreSQL back-end, against a real PostgreSQL 15 server that CTest starts
// (tests/support/postgres_server, fixture postgres_server): documents in and out, the same search
// results as SQLite for the same records, replicas (two collections over the same records) that
// catch up with each other's commits, two writers at once that neither lose nor duplicate a chunk,
// and the vector snapshot loaded and caught up at a reopen, or rebuilt when damaged.

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>

#include "store/collection.h"
#include "store/postgres_connection.h"
#include "store/postgres_record_store.h"
#include "tests/store/store_test_support.h"

namespace kotae::store {
namespace {

using testing::make_document;
using testing::put;
using testing::TempDir;

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

constexpr std::size_t kDim = 16;

CollectionInfo test_info() {
  return CollectionInfo{"test-embedder/fp32", kDim, 256, 32};
}

std::string server_url() {
  std::ifstream file(KOTAE_TEST_POSTGRES_URL_FILE);
  std::string url;
  std::getline(file, url);
  return url;
}

// A tenant of its own per test (and per run), so tests share the server but no collection.
std::string unique_tenant() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(test->name()) + "-" + std::to_string(::getpid());
}

class PostgresStore : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = server_url();
    ASSERT_FALSE(url_.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
    auto connection = PgConnection::connect(url_);
    ASSERT_OK(connection);
    ASSERT_OK(migrate_postgres_schema(**connection));
    tenant_ = unique_tenant();
  }

  // A replica: a pool of its own, its own snapshot file.
  Result<std::unique_ptr<Collection>> open_replica(const std::filesystem::path& snapshot, bool create = true) {
    auto pool = std::make_shared<PgPool>(url_);
    const CollectionInfo info = test_info();
    auto records = PostgresRecordStore::open(pool, tenant_, "notes", create ? &info : nullptr);
    if (!records) return records.error();
    return Collection::open(std::move(*records), snapshot);
  }

  std::int64_t count(const std::string& sql) {
    auto connection = PgConnection::connect(url_);
    if (!connection) return -1;
    auto rows = (*connection)->query(sql, PgParams().add(tenant_));
    return rows && rows->rows() == 1 ? rows->int64(0, 0) : -1;
  }

  std::string url_;
  std::string tenant_;
  TempDir temp_;
};

TEST_F(PostgresStore, StoresFindsReplacesAndRemovesDocuments) {
  auto opened = open_replica(temp_.path() / "a.index");
  ASSERT_OK(opened);
  Collection& collection = **opened;
  EXPECT_NE(collection.location().find("PostgreSQL"), std::string::npos) << collection.location();
  std::mt19937 rng(7);
  const auto guide =
      make_document("docs/guide.md", "md", {"Rotate the signing keys monthly.", "Backups run nightly."}, kDim, rng);
  const auto faq = make_document("docs/faq.html", "html", {"A virtual package names a capability."}, kDim, rng);
  auto guide_id = put(collection, guide);
  ASSERT_OK(guide_id);
  ASSERT_OK(put(collection, faq));
  EXPECT_EQ(collection.document_count(), 2u);
  EXPECT_EQ(collection.chunk_count(), 3u);

  auto found = collection.find_document("docs/guide.md");
  ASSERT_OK(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->title, guide.document.title);
  EXPECT_EQ((*found)->modified_ns, guide.document.modified_ns);
  EXPECT_EQ((*found)->chunk_count, 2);
  auto with_text = collection.document(*guide_id);
  ASSERT_OK(with_text);
  EXPECT_EQ((*with_text)->text, guide.document.text);

  auto nearest = collection.search_vector(guide.embedding(1), 1);
  ASSERT_OK(nearest);
  ASSERT_EQ(nearest->size(), 1u);
  auto chunks = collection.chunks(std::vector<std::int64_t>{(*nearest)[0].chunk_id});
  ASSERT_OK(chunks);
  ASSERT_EQ(chunks->size(), 1u);
  EXPECT_EQ((*chunks)[0].text, "Backups run nightly.");
  EXPECT_EQ((*chunks)[0].heading_path, (std::vector<std::string>{"Guide", "Section"}));
  EXPECT_EQ((*chunks)[0].page_first, 2u);
  EXPECT_EQ((*chunks)[0].table, "Prices");
  EXPECT_EQ((*chunks)[0].row_first, 2u);
  EXPECT_EQ((*chunks)[0].row_last, 10u);
  ASSERT_EQ((*chunks)[0].boxes.size(), 1u);
  EXPECT_FLOAT_EQ((*chunks)[0].boxes[0].top, 0.25f);
  auto stored = collection.embeddings(std::vector<std::int64_t>{(*nearest)[0].chunk_id});
  ASSERT_OK(stored);
  EXPECT_EQ(*stored, std::vector<float>(guide.embedding(1).begin(), guide.embedding(1).end()));

  auto words = collection.search_bm25("virtual package", 5);
  ASSERT_OK(words);
  ASSERT_FALSE(words->empty());
  EXPECT_EQ(words->front().document_id, (*collection.find_document("docs/faq.html"))->id);
  auto filtered = collection.search_vector(guide.embedding(0), 5, SearchFilter{"", {"html"}});
  ASSERT_OK(filtered);
  ASSERT_EQ(filtered->size(), 1u);

  // Replaced: the old chunks leave every index, the new ones arrive.
  const auto guide_v2 = make_document("docs/guide.md", "md", {"Keys are rotated weekly now."}, kDim, rng);
  ASSERT_OK(put(collection, guide_v2));
  EXPECT_EQ(collection.document_count(), 2u);
  EXPECT_EQ(collection.chunk_count(), 2u);
  auto old_words = collection.search_bm25("backups nightly", 5);
  ASSERT_OK(old_words);
  EXPECT_TRUE(old_words->empty());

  auto removed = collection.remove_document("docs/faq.html");
  ASSERT_OK(removed);
  EXPECT_TRUE(*removed);
  auto again = collection.remove_document("docs/faq.html");
  ASSERT_OK(again);
  EXPECT_FALSE(*again);
  EXPECT_EQ(collection.chunk_count(), 1u);
  auto report = collection.check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
  EXPECT_EQ(report->chunks, 1u);
  EXPECT_EQ(count("SELECT count(*) FROM chunks c JOIN collections k ON k.id = c.collection_id WHERE k.tenant = $1"), 1);
}

TEST_F(PostgresStore, AnotherEmbedderIsAnErrorAndAMissingCollectionIsNotFound) {
  auto pool = std::make_shared<PgPool>(url_);
  auto missing = PostgresRecordStore::open(pool, tenant_, "nothing", nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  const CollectionInfo info = test_info();
  ASSERT_OK(PostgresRecordStore::open(pool, tenant_, "notes", &info));
  CollectionInfo other = info;
  other.embedder_id = "another/fp32";
  auto refused = PostgresRecordStore::open(pool, tenant_, "notes", &other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(refused.error().message.find("another/fp32"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("test-embedder/fp32"), std::string::npos) << refused.error().message;
}

TEST_F(PostgresStore, AReplicaCatchesUpWithAnothersCommits) {
  auto a = open_replica(temp_.path() / "a.index");
  auto b = open_replica(temp_.path() / "b.index");
  ASSERT_OK(a);
  ASSERT_OK(b);
  std::mt19937 rng(11);
  const auto first = make_document("one.md", "md", {"Alpha bravo charlie.", "Delta echo."}, kDim, rng);
  ASSERT_OK(put(**a, first));
  EXPECT_EQ((*b)->chunk_count(), 0u);  // PostgreSQL does not tell a search: the follower does
  ASSERT_OK((*b)->catch_up());
  EXPECT_EQ((*b)->chunk_count(), 2u);
  EXPECT_EQ((*b)->change_position(), (*a)->change_position());
  auto found = (*b)->search_vector(first.embedding(1), 1);
  ASSERT_OK(found);
  ASSERT_EQ(found->size(), 1u);
  auto words = (*b)->search_bm25("charlie", 3);
  ASSERT_OK(words);
  EXPECT_EQ(words->size(), 1u);

  // B replaces and removes; A follows.
  const auto second = make_document("one.md", "md", {"Foxtrot golf."}, kDim, rng);
  ASSERT_OK(put(**b, second));
  ASSERT_OK((*a)->catch_up());
  EXPECT_EQ((*a)->chunk_count(), 1u);
  auto gone = (*a)->search_bm25("charlie", 3);
  ASSERT_OK(gone);
  EXPECT_TRUE(gone->empty());
  ASSERT_OK((*b)->remove_document("one.md"));
  ASSERT_OK((*a)->catch_up());
  EXPECT_EQ((*a)->chunk_count(), 0u);
  EXPECT_EQ((*a)->document_count(), 0u);
  auto report = (*a)->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;
}

TEST_F(PostgresStore, TwoWritersAtOnceNeitherLoseNorDuplicateAChunk) {
  auto a = open_replica(temp_.path() / "a.index");
  auto b = open_replica(temp_.path() / "b.index");
  ASSERT_OK(a);
  ASSERT_OK(b);
  // Each writes 20 documents of its own and rewrites the same 5 shared ones, at the same time.
  auto write = [](Collection* collection, int seed, std::vector<std::string>* errors) {
    std::mt19937 rng(seed);
    for (int i = 0; i < 25; ++i) {
      const std::string path =
          i < 20 ? "own-" + std::to_string(seed) + "-" + std::to_string(i) : "shared-" + std::to_string(i % 5);
      const auto input =
          make_document(path, "md", {"chunk one of " + path, "chunk two of " + path, "three"}, kDim, rng);
      if (auto stored = put(*collection, input); !stored) errors->push_back(stored.error().message);
    }
  };
  std::vector<std::string> errors_a, errors_b;
  std::thread writer_a(write, a->get(), 1, &errors_a);
  std::thread writer_b(write, b->get(), 2, &errors_b);
  writer_a.join();
  writer_b.join();
  EXPECT_TRUE(errors_a.empty()) << errors_a.front();
  EXPECT_TRUE(errors_b.empty()) << errors_b.front();

  // 45 documents (20 + 20 own, 5 shared), 3 chunks each, nothing more in the database.
  const std::string of_tenant = " JOIN collections k ON k.id = x.collection_id WHERE k.tenant = $1";
  EXPECT_EQ(count("SELECT count(*) FROM documents x" + of_tenant), 45);
  EXPECT_EQ(count("SELECT count(*) FROM chunks x" + of_tenant), 135);
  for (auto* replica : {a->get(), b->get()}) {
    ASSERT_OK(replica->catch_up());
    EXPECT_EQ(replica->document_count(), 45u);
    EXPECT_EQ(replica->chunk_count(), 135u);
    auto report = replica->check();
    ASSERT_OK(report);
    EXPECT_TRUE(report->ok()) << report->details;
  }
  EXPECT_EQ((*a)->change_position(), (*b)->change_position());
}

TEST_F(PostgresStore, AReopenLoadsTheSnapshotAndReplaysOnlyTheTail) {
  const auto snapshot = temp_.path() / "a.index";
  std::mt19937 rng(5);
  std::vector<testing::DocumentInput> inputs;
  for (int i = 0; i < 12; ++i)
    inputs.push_back(make_document("d" + std::to_string(i), "md", {"text " + std::to_string(i)}, kDim, rng));
  {
    auto a = open_replica(snapshot);
    ASSERT_OK(a);
    for (int i = 0; i < 8; ++i) ASSERT_OK(put(**a, inputs[i]));
    ASSERT_OK((*a)->save_vector_index());
  }
  ASSERT_TRUE(std::filesystem::exists(snapshot));
  {
    auto b = open_replica(temp_.path() / "b.index");  // meanwhile, another replica
    ASSERT_OK(b);
    for (int i = 8; i < 12; ++i) ASSERT_OK(put(**b, inputs[i]));
    ASSERT_OK((*b)->remove_document("d0"));
  }
  auto reopened = open_replica(snapshot, /*create=*/false);
  ASSERT_OK(reopened);
  EXPECT_EQ((*reopened)->vector_index_rebuilt_because(), "");
  EXPECT_EQ((*reopened)->chunk_count(), 11u);
  for (int i = 1; i < 12; ++i) {
    auto found = (*reopened)->search_vector(inputs[i].embedding(0), 1);
    ASSERT_OK(found);
    ASSERT_EQ(found->size(), 1u);
    auto record = (*reopened)->documents(std::vector<std::int64_t>{(*found)[0].document_id});
    ASSERT_OK(record);
    EXPECT_EQ((*record)[0].path, "d" + std::to_string(i));
  }
  auto report = (*reopened)->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;

  // A damaged snapshot is rebuilt from the records, and says why.
  reopened->reset();
  {
    std::fstream file(snapshot, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(64);
    file.write("garbage!", 8);
  }
  auto rebuilt = open_replica(snapshot, /*create=*/false);
  ASSERT_OK(rebuilt);
  EXPECT_NE((*rebuilt)->vector_index_rebuilt_because(), "");
  EXPECT_EQ((*rebuilt)->chunk_count(), 11u);
  auto after = (*rebuilt)->check();
  ASSERT_OK(after);
  EXPECT_TRUE(after->ok()) << after->details;
}

// A write is one transaction: dropped before its commit (the process died, the connection was lost),
// nothing of it is there, and the next write goes through.
TEST_F(PostgresStore, AWriteNotCommittedLeavesNothing) {
  auto pool = std::make_shared<PgPool>(url_);
  const CollectionInfo info = test_info();
  auto records = PostgresRecordStore::open(pool, tenant_, "notes", &info);
  ASSERT_OK(records);
  std::mt19937 rng(3);
  const auto input = make_document("half.md", "md", {"one", "two", "three"}, kDim, rng);
  const std::vector<std::string> headings(3, "[]");
  const std::int64_t before = (*records)->last_change().value();
  {
    auto transaction = (*records)->begin_write();
    ASSERT_OK(transaction);
    auto id = (*transaction)->insert_document(input.document, input.chunks.size());
    ASSERT_OK(id);
    ASSERT_OK((*transaction)->insert_chunks(*id, input.chunks, headings, input.embeddings, {}));
  }  // destroyed uncommitted
  auto found = (*records)->find_document("half.md");
  ASSERT_OK(found);
  EXPECT_FALSE(found->has_value());
  EXPECT_EQ((*records)->last_change().value(), before);
  auto ids = (*records)->chunk_ids();
  ASSERT_OK(ids);
  EXPECT_TRUE(ids->empty());

  auto transaction = (*records)->begin_write();
  ASSERT_OK(transaction);
  auto id = (*transaction)->insert_document(input.document, input.chunks.size());
  ASSERT_OK(id);
  ASSERT_OK((*transaction)->insert_chunks(*id, input.chunks, headings, input.embeddings, {}));
  auto position = (*transaction)->commit();
  ASSERT_OK(position);
  EXPECT_GT(*position, before);
  EXPECT_EQ((*records)->chunk_ids().value().size(), 3u);
}

TEST_F(PostgresStore, AnUnreachableServerIsUnavailableAndNamesNoPassword) {
  auto connection = PgConnection::connect("postgres://kotae:s3cret@/kotae?host=/nonexistent/socket");
  ASSERT_FALSE(connection.ok());
  EXPECT_EQ(connection.error().code, ErrorCode::unavailable);
  EXPECT_EQ(connection.error().message.find("s3cret"), std::string::npos) << connection.error().message;
  EXPECT_EQ(redacted_url("postgresql://u:pw@h/db"), "postgresql://u:***@h/db");
}

}  // namespace
}  // namespace kotae::store
