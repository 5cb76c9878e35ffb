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

INSTANTIATE_TEST_SUITE_P(Stores, DocumentFileStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

INSTANTIATE_TEST_SUITE_P(Stores, JobRecordStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kotae::store
