// The audit trails (store/sqlite_audit_trail, store/postgres_audit_trail), each against a real
// database: events read back newest first as written, one tenant's never shown to another, filters
// and paging, and trimming by age and (SQLite, whose file is the test's own) by count.

#include <gtest/gtest.h>

#include <functional>

#include <functional>

#include "store/postgres_audit_trail.h"
#include "store/sqlite_audit_trail.h"
#include "support/store_backend_test.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

// A query of `tenant`'s events, changed by `set`.
AuditQuery query(const std::string& tenant, const std::function<void(AuditQuery&)>& set = {}) {
  AuditQuery q;
  q.tenant = tenant;
  if (set) set(q);
  return q;
}

class AuditTrailTest : public kotae::testing::StoreBackendTest {
 protected:
  void SetUp() override {
    StoreBackendTest::SetUp();
    if (sqlite()) {
      auto opened = SqliteAuditTrail::open(folder_);
      ASSERT_OK(opened);
      trail_ = std::move(*opened);
      return;
    }
    const std::string url = postgres_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty());
    trail_ = std::make_unique<PostgresAuditTrail>(std::make_shared<PgPool>(url));
  }
  void TearDown() override {
    trail_.reset();
    StoreBackendTest::TearDown();
  }

  AuditEvent event(const std::string& tenant, const std::string& action, double at, const std::string& outcome = "ok") {
    return {0,
            at,
            tenant,
            "key:" + action,
            "10.0.0.7",
            action,
            "handbook/3",
            outcome,
            outcome == "ok" ? 200 : 403,
            "req-1",
            R"({"question":"¿dónde?"})"};
  }
  std::vector<std::string> actions(const AuditQuery& q) {
    auto found = trail_->find(q);
    EXPECT_TRUE(found.ok()) << found.error().message;
    std::vector<std::string> out;
    if (found.ok())
      for (const auto& e : *found) out.push_back(e.action);
    return out;
  }

  std::unique_ptr<AuditTrail> trail_;
};

TEST_P(AuditTrailTest, ReadsBackNewestFirstAndNeverAnotherTenants) {
  ASSERT_TRUE(trail_);
  ASSERT_OK(trail_->record({event(acme_, "collection.create", 1000.5), event(globex_, "ask", 1001),
                            event(acme_, "document.upload", 1002, "denied")}));
  auto found = trail_->find(query(acme_));
  ASSERT_OK(found);
  ASSERT_EQ(found->size(), 2u);
  const auto& newest = (*found)[0];
  EXPECT_EQ(newest.action, "document.upload");
  EXPECT_GT(newest.seq, (*found)[1].seq);
  EXPECT_DOUBLE_EQ(newest.at, 1002);
  EXPECT_EQ(newest.tenant, acme_);
  EXPECT_EQ(newest.actor, "key:document.upload");
  EXPECT_EQ(newest.address, "10.0.0.7");
  EXPECT_EQ(newest.target, "handbook/3");
  EXPECT_EQ(newest.outcome, "denied");
  EXPECT_EQ(newest.status, 403);
  EXPECT_EQ(newest.request_id, "req-1");
  EXPECT_EQ(newest.detail, R"({"question":"¿dónde?"})");
  EXPECT_DOUBLE_EQ((*found)[1].at, 1000.5);
  EXPECT_EQ(actions(query(globex_)), std::vector<std::string>{"ask"});
}

TEST_P(AuditTrailTest, FiltersAndPages) {
  ASSERT_TRUE(trail_);
  std::vector<AuditEvent> events;
  for (int i = 0; i < 5; ++i) events.push_back(event(acme_, "ask", 2000 + i));
  events.push_back(event(acme_, "document.delete", 2010, "denied"));
  ASSERT_OK(trail_->record(events));
  EXPECT_EQ(actions(query(acme_, [](AuditQuery& q) { q.outcome = "denied"; })),
            std::vector<std::string>{"document.delete"});
  EXPECT_EQ(actions(query(acme_, [](AuditQuery& q) { q.actor = "key:ask"; })).size(), 5u);
  EXPECT_EQ(actions(query(acme_,
                          [](AuditQuery& q) {
                            q.action = "ask";
                            q.since = 2002;
                            q.until = 2004;
                          }))
                .size(),
            2u);
  auto first = trail_->find(query(acme_, [](AuditQuery& q) { q.limit = 4; }));
  ASSERT_OK(first);
  ASSERT_EQ(first->size(), 4u);
  auto rest = trail_->find(query(acme_, [&](AuditQuery& q) {
    q.before_seq = first->back().seq;
    q.limit = 4;
  }));
  ASSERT_OK(rest);
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_LT((*rest)[0].seq, first->back().seq);
  EXPECT_DOUBLE_EQ(rest->back().at, 2000);
}

TEST_P(AuditTrailTest, TrimsByAgeAndByCount) {
  ASSERT_TRUE(trail_);
  ASSERT_OK(trail_->record({event(acme_, "old", 10), event(acme_, "older", 5), event(acme_, "recent", 4e9)}));
  ASSERT_OK(trail_->trim(100, 0));
  EXPECT_EQ(actions(query(acme_)), std::vector<std::string>{"recent"});
  if (GetParam() != "sqlite") return;  // the shared database holds other tests' events: no count bound there
  ASSERT_OK(trail_->record({event(acme_, "a", 4e9), event(acme_, "b", 4e9), event(acme_, "c", 4e9)}));
  ASSERT_OK(trail_->trim(100, 2));
  EXPECT_EQ(actions(query(acme_)), (std::vector<std::string>{"c", "b"}));
}

INSTANTIATE_TEST_SUITE_P(Stores, AuditTrailTest, ::testing::Values("sqlite", "postgres"), kotae::testing::backend_name);

}  // namespace
}  // namespace kotae::store
