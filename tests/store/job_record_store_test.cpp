// The stores a server keeps besides the collections, each behind both back-ends and held to one
// behaviour: job records (store/job_record_store.h: SQLite's server.db, PostgreSQL's table `jobs`) and
// kept document files (store/document_file_store.h: the collection's folder, table `document_files`),
// against the real PostgreSQL server CTest starts.

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/random_id.h"
#include "store/catalog.h"
#include "store/folder_document_files.h"
#include "store/postgres_document_files.h"
#include "store/postgres_job_records.h"
#include "store/postgres_schema.h"
#include "store/sqlite_job_records.h"
#include "support/fixture_url.h"

namespace kotae::store {
namespace {

namespace fs = std::filesystem;

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

class JobRecordStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    tenant_ = random_id("t");  // PostgreSQL's table is shared with the other tests
    if (GetParam() == "sqlite") {
      folder_ = fs::temp_directory_path() / ("kotae-job-records-" + std::to_string(::getpid()));
      fs::remove_all(folder_);
      auto opened = SqliteJobRecords::open(folder_);
      ASSERT_OK(opened);
      store_ = std::move(*opened);
      return;
    }
    const std::string url = kotae::testing::fixture_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
    auto connection = PgConnection::connect(url);
    ASSERT_OK(connection);
    ASSERT_OK(migrate_postgres_schema(**connection));
    store_ = std::make_unique<PostgresJobRecords>(std::make_shared<PgPool>(url, 2), "test");
  }
  void TearDown() override {
    store_.reset();
    if (!folder_.empty()) fs::remove_all(folder_);
  }

  JobRow row(const std::string& id, const std::string& collection, double finished_at = 0) {
    nlohmann::json record = {{"id", id}, {"tenant", tenant_}, {"collection", collection}};
    record["finished_at"] = finished_at > 0 ? nlohmann::json(finished_at) : nlohmann::json(nullptr);
    return {id, tenant_, collection, record.dump()};
  }
  std::vector<std::string> ids(const Result<std::vector<std::string>>& records) {
    std::vector<std::string> out;
    if (!records) return {"(" + records.error().message + ")"};
    for (const auto& r : *records) out.push_back(nlohmann::json::parse(r)["id"]);
    return out;
  }

  std::string tenant_;
  fs::path folder_;
  std::unique_ptr<JobRecordStore> store_;
};

TEST_P(JobRecordStoreTest, ARecordSavedAgainIsReplacedAndOnlyItsTenantSeesIt) {
  ASSERT_TRUE(store_);
  ASSERT_OK(store_->save(row("j1", "faq")));
  ASSERT_OK(store_->save(row("j1", "faq", 5)));
  auto got = store_->get("j1", tenant_);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(nlohmann::json::parse(**got)["finished_at"], 5);
  auto other = store_->get("j1", tenant_ + "x");
  ASSERT_OK(other);
  EXPECT_FALSE(other->has_value());
  EXPECT_EQ(ids(store_->list(tenant_, 10)), std::vector<std::string>{"j1"});
}

TEST_P(JobRecordStoreTest, ListsNewestFirstAndEachCollectionOldestFirst) {
  ASSERT_TRUE(store_);
  for (const char* id : {"a", "b", "c"}) ASSERT_OK(store_->save(row(id, id == std::string("b") ? "docs" : "faq")));
  EXPECT_EQ(ids(store_->list(tenant_, 2)), (std::vector<std::string>{"c", "b"}));
  EXPECT_EQ(ids(store_->of_collection(tenant_, "faq")), (std::vector<std::string>{"a", "c"}));
  ASSERT_OK(store_->remove_collection(tenant_, "faq"));
  EXPECT_EQ(ids(store_->list(tenant_, 10)), std::vector<std::string>{"b"});
  ASSERT_OK(store_->remove("b"));
  EXPECT_TRUE(ids(store_->list(tenant_, 10)).empty());
}

TEST_P(JobRecordStoreTest, ARenamedCollectionsRecordsFollowItColumnAndRecord) {
  ASSERT_TRUE(store_);
  ASSERT_OK(store_->save(row("a", "faq", 10)));
  ASSERT_OK(store_->save(row("b", "docs", 20)));
  ASSERT_OK(store_->save(row("c", "faq")));
  ASSERT_OK(store_->rename_collection(tenant_, "faq", "handbook"));
  EXPECT_TRUE(ids(store_->of_collection(tenant_, "faq")).empty());
  EXPECT_EQ(ids(store_->of_collection(tenant_, "handbook")), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(ids(store_->of_collection(tenant_, "docs")), std::vector<std::string>{"b"});
  auto got = store_->get("a", tenant_);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  const auto record = nlohmann::json::parse(**got);
  EXPECT_EQ(record["collection"], "handbook");
  EXPECT_EQ(record["finished_at"], 10);
  EXPECT_EQ(record["id"], "a");
  ASSERT_OK(store_->rename_collection(tenant_ + "x", "docs", "elsewhere"));  // another tenant's: nothing
  EXPECT_EQ(ids(store_->of_collection(tenant_, "docs")), std::vector<std::string>{"b"});
}

TEST_P(JobRecordStoreTest, ATenantKeepsItsNewestFinishedJobsAndEveryUnfinishedOne) {
  ASSERT_TRUE(store_);
  ASSERT_OK(store_->save(row("old", "faq", 10)));
  ASSERT_OK(store_->save(row("running", "faq")));
  ASSERT_OK(store_->save(row("newer", "faq", 20)));
  ASSERT_OK(store_->save(row("newest", "faq", 30)));
  ASSERT_OK(store_->forget_finished(tenant_, 2));
  EXPECT_EQ(ids(store_->of_collection(tenant_, "faq")), (std::vector<std::string>{"running", "newer", "newest"}));
}

class DocumentFileStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    tenant_ = random_id("t");
    folder_ = fs::temp_directory_path() / ("kotae-document-files-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    CatalogOptions where{.store = "", .data_dir = folder_, .index_cache = folder_ / "index-cache"};
    if (GetParam() == "postgres") {
      where.store = kotae::testing::fixture_url(KOTAE_TEST_POSTGRES_URL_FILE);
      ASSERT_FALSE(where.store.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
    }
    auto catalog = Catalog::open(where);
    ASSERT_OK(catalog);
    catalog_ = std::move(*catalog);
    const CollectionInfo info{"test-embedder/fp32", 4, 256, 32};
    ASSERT_OK(catalog_->open_records(tenant_, "faq", &info));
    if (GetParam() == "postgres") {
      files_ = std::make_unique<PostgresDocumentFiles>(std::make_shared<PgPool>(where.store, 1));
    } else {
      files_ = std::make_unique<FolderDocumentFiles>(*catalog_);
    }
  }
  void TearDown() override {
    files_.reset();
    if (catalog_) (void)catalog_->remove(tenant_, "faq");
    catalog_.reset();
    fs::remove_all(folder_);
  }

  std::string tenant_;
  fs::path folder_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<DocumentFileStore> files_;
};

TEST_P(DocumentFileStoreTest, KeptBytesAreReadBackReplacedAndForgotten) {
  ASSERT_TRUE(files_);
  auto none = files_->read(tenant_, "faq", "a.pdf");
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
  const std::string bytes("%PDF-1.4\0binary\xff", 18);
  ASSERT_OK(files_->keep(tenant_, "faq", "a.pdf", bytes));
  ASSERT_OK(files_->keep(tenant_, "faq", "b.md", "# B"));
  auto got = files_->read(tenant_, "faq", "a.pdf");
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, bytes);
  auto other_tenant = files_->read(tenant_ + "x", "faq", "a.pdf");
  EXPECT_TRUE(!other_tenant.ok() || !other_tenant->has_value());
  ASSERT_OK(files_->keep(tenant_, "faq", "a.pdf", "replaced"));
  EXPECT_EQ(files_->read(tenant_, "faq", "a.pdf")->value_or(""), "replaced");
  ASSERT_OK(files_->forget(tenant_, "faq", "a.pdf"));
  ASSERT_OK(files_->forget(tenant_, "faq", "a.pdf"));  // twice: no error
  EXPECT_FALSE(files_->read(tenant_, "faq", "a.pdf")->has_value());
  EXPECT_EQ(files_->read(tenant_, "faq", "b.md")->value_or(""), "# B");
}

// Catalog::rename, with what follows a collection by its place: its kept files and (PostgreSQL) its
// rows, and another replica's open copy, which finds its name gone.
TEST_P(DocumentFileStoreTest, ARenamedCollectionKeepsItsRecordsAndFilesAndTheOldNameIsGone) {
  ASSERT_TRUE(files_);
  ASSERT_OK(files_->keep(tenant_, "faq", "a.pdf", "kept"));
  const CollectionInfo info{"test-embedder/fp32", 4, 256, 32};
  ASSERT_OK(catalog_->open_records(tenant_, "taken", &info));
  std::unique_ptr<RecordStore> elsewhere;  // a replica's copy, open under the old name
  if (GetParam() == "postgres") {
    auto opened = catalog_->open_records(tenant_, "faq", nullptr);
    ASSERT_OK(opened);
    elsewhere = std::move(*opened);
    ASSERT_OK(elsewhere->last_change());
  }

  auto taken = catalog_->rename(tenant_, "faq", "taken");
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::already_exists);
  auto bad = catalog_->rename(tenant_, "faq", "../x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
  auto missing = catalog_->rename(tenant_, "nothing", "new");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  EXPECT_TRUE(*catalog_->exists(tenant_, "faq")) << "a refused rename changes nothing";

  ASSERT_OK(catalog_->rename(tenant_, "faq", "handbook"));
  EXPECT_FALSE(*catalog_->exists(tenant_, "faq"));
  EXPECT_TRUE(*catalog_->exists(tenant_, "handbook"));
  auto names = catalog_->names(tenant_);
  ASSERT_OK(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"handbook", "taken"}));
  EXPECT_EQ(files_->read(tenant_, "handbook", "a.pdf")->value_or(""), "kept");
  auto old_file = files_->read(tenant_, "faq", "a.pdf");
  EXPECT_TRUE(!old_file.ok() || !old_file->has_value());
  auto records = catalog_->open_records(tenant_, "handbook", nullptr);
  ASSERT_OK(records);
  EXPECT_EQ((*records)->info().embedder_id, "test-embedder/fp32");
  auto reopened_old = catalog_->open_records(tenant_, "faq", nullptr);
  ASSERT_FALSE(reopened_old.ok());
  EXPECT_EQ(reopened_old.error().code, ErrorCode::not_found);
  if (elsewhere) {
    auto change = elsewhere->last_change();
    ASSERT_FALSE(change.ok()) << "an open copy under the old name must notice the rename";
    EXPECT_EQ(change.error().code, ErrorCode::not_found);
  }
  records->reset();
  ASSERT_OK(catalog_->remove(tenant_, "handbook"));
  ASSERT_OK(catalog_->remove(tenant_, "taken"));
}

INSTANTIATE_TEST_SUITE_P(Stores, DocumentFileStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

INSTANTIATE_TEST_SUITE_P(Stores, JobRecordStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kotae::store
