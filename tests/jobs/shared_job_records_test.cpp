// The ingestion jobs every replica shares (jobs/shared_job_records) against the PostgreSQL server
// CTest starts, each test in tenants of its own: a tenant keeps its newest finished jobs and no more,
// however many it runs, while its unfinished jobs and other tenants' jobs stay.

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/random_id.h"
#include "jobs/shared_job_records.h"
#include "store/postgres_record_store.h"
#include "support/fixture_url.h"

namespace kotae::jobs {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

JobStatus job(const std::string& tenant, double finished) {
  JobStatus s;
  s.id = random_id("job_");
  s.tenant = tenant;
  s.collection = "notes";
  s.created = finished > 0 ? finished - 1 : 1000;
  s.state = finished > 0 ? "succeeded" : "running";
  s.finished = finished;
  return s;
}

class SharedJobRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string url = kotae::testing::fixture_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
    auto connection = store::PgConnection::connect(url);
    ASSERT_OK(connection);
    ASSERT_OK(store::migrate_postgres_schema(**connection));
    records_ = std::make_unique<SharedJobRecords>(std::make_shared<store::PgPool>(url), "test", 2);
    const std::string unique = std::to_string(::getpid()) + "-" + random_id("");
    alice_ = "alice-" + unique;
    bob_ = "bob-" + unique;
  }
  bool known(const JobStatus& s) {
    auto got = records_->get(s.id, s.tenant);
    EXPECT_TRUE(got.ok()) << got.error().message;
    return got.ok() && got->has_value();
  }

  std::unique_ptr<SharedJobRecords> records_;
  std::string alice_, bob_;
};

TEST_F(SharedJobRecordsTest, ATenantKeepsItsNewestFinishedJobsOnly) {
  const auto running = job(alice_, 0);
  const auto bobs = job(bob_, 50);
  ASSERT_OK(records_->publish(running));
  ASSERT_OK(records_->publish(bobs));
  std::vector<JobStatus> finished;
  for (double at : {100.0, 300.0, 200.0, 400.0}) {  // finished out of order: the bound goes by finish time
    finished.push_back(job(alice_, at));
    ASSERT_OK(records_->publish(finished.back()));
  }
  EXPECT_FALSE(known(finished[0])) << "finished at 100";
  EXPECT_FALSE(known(finished[2])) << "finished at 200";
  EXPECT_TRUE(known(finished[1])) << "finished at 300";
  EXPECT_TRUE(known(finished[3])) << "finished at 400";
  EXPECT_TRUE(known(running)) << "an unfinished job is never forgotten";
  EXPECT_TRUE(known(bobs)) << "another tenant's jobs are not alice's to forget";
  auto listed = records_->list(alice_, 100);
  ASSERT_OK(listed);
  EXPECT_EQ(listed->size(), 3u);
}

TEST_F(SharedJobRecordsTest, ACollectionsActiveJobsAreCountedAndFollowItsRename) {
  auto running = job(alice_, 0), done = job(alice_, 100), other = job(alice_, 0);
  other.collection = "drafts";
  for (const auto& s : {running, done, other}) ASSERT_OK(records_->publish(s));
  auto active = records_->active_on(alice_, "notes");
  ASSERT_OK(active);
  EXPECT_EQ(*active, 1u) << "the running one; the finished one and another collection's are not counted";
  ASSERT_OK(records_->rename_collection(alice_, "notes", "handbook"));
  auto count = [&](const std::string& tenant, const std::string& collection) {
    auto n = records_->active_on(tenant, collection);
    EXPECT_TRUE(n.ok()) << n.error().message;
    return n.ok() ? *n : 99;
  };
  EXPECT_EQ(count(alice_, "notes"), 0u);
  EXPECT_EQ(count(alice_, "handbook"), 1u);
  EXPECT_EQ(count(bob_, "handbook"), 0u);
  auto got = records_->get(done.id, alice_);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->collection, "handbook") << "the record itself names the new name";
  EXPECT_EQ((*got)->state, "succeeded");
}

TEST_F(SharedJobRecordsTest, ARecordPublishedAgainIsNotCountedTwice) {
  const auto first = job(alice_, 100), second = job(alice_, 200);
  ASSERT_OK(records_->publish(first));
  ASSERT_OK(records_->publish(second));
  ASSERT_OK(records_->publish(second));  // saved after every file: the same job, again
  EXPECT_TRUE(known(first));
  EXPECT_TRUE(known(second));
}

}  // namespace
}  // namespace kotae::jobs
