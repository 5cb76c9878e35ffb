// Collections' members (store/sqlite_members, store/postgres_members), each against a real database:
// members read back by kind and subject, a role changed in place, one tenant's and one collection's
// never another's, removal, and a deleted collection's members gone with it.

#include <gtest/gtest.h>

#include "store/postgres_members.h"
#include "store/sqlite_members.h"
#include "support/store_backend_test.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

class MemberStoreTest : public kotae::testing::StoreBackendTest {
 protected:
  void SetUp() override {
    StoreBackendTest::SetUp();
    if (sqlite()) {
      auto opened = SqliteMembers::open(folder_);
      ASSERT_OK(opened);
      members_ = std::move(*opened);
      return;
    }
    const std::string url = postgres_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty());
    members_ = std::make_unique<PostgresMembers>(std::make_shared<PgPool>(url));
  }
  void TearDown() override {
    members_.reset();
    StoreBackendTest::TearDown();
  }
  std::vector<std::string> listed(const std::string& tenant, const std::string& collection) {
    auto found = members_->members(tenant, collection);
    EXPECT_TRUE(found.ok()) << found.error().message;
    std::vector<std::string> out;
    if (found.ok())
      for (const auto& m : *found) out.push_back(m.kind + ":" + m.subject + "=" + m.role);
    return out;
  }

  std::unique_ptr<MemberStore> members_;
};

TEST_P(MemberStoreTest, ReadsBackChangesAndRemovesMembersOfOneCollectionOnly) {
  ASSERT_TRUE(members_);
  ASSERT_OK(members_->put(acme_, "hr", {"user", "alice", "owner", 1000.5, "user:alice"}));
  ASSERT_OK(members_->put(acme_, "hr", {"group", "staff", "reader", 1001, "user:alice"}));
  ASSERT_OK(members_->put(acme_, "hr", {"tenant", "", "reader", 1002, "user:alice"}));
  ASSERT_OK(members_->put(acme_, "legal", {"key", "ci", "editor", 1003, "key:ops"}));
  ASSERT_OK(members_->put(globex_, "hr", {"user", "mallory", "owner", 1004, "user:mallory"}));
  EXPECT_EQ(listed(acme_, "hr"),
            (std::vector<std::string>{"group:staff=reader", "tenant:=reader", "user:alice=owner"}));
  auto first = members_->members(acme_, "hr");
  ASSERT_OK(first);
  EXPECT_DOUBLE_EQ((*first)[2].added_at, 1000.5);
  EXPECT_EQ((*first)[2].added_by, "user:alice");

  ASSERT_OK(members_->put(acme_, "hr", {"group", "staff", "editor", 1005, "user:alice"}));  // a role changed
  EXPECT_EQ(listed(acme_, "hr")[0], "group:staff=editor");
  auto all = members_->all(acme_);
  ASSERT_OK(all);
  EXPECT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at("legal").size(), 1u);
  EXPECT_EQ(listed(globex_, "hr"), std::vector<std::string>{"user:mallory=owner"});

  auto removed = members_->remove(acme_, "hr", "group", "staff");
  ASSERT_OK(removed);
  EXPECT_TRUE(*removed);
  auto again = members_->remove(acme_, "hr", "group", "staff");
  ASSERT_OK(again);
  EXPECT_FALSE(*again);
  ASSERT_OK(members_->remove_collection(acme_, "hr"));
  EXPECT_TRUE(listed(acme_, "hr").empty());
  EXPECT_EQ(listed(acme_, "legal").size(), 1u);
  EXPECT_EQ(listed(globex_, "hr").size(), 1u);
}

TEST_P(MemberStoreTest, ACopyReplacesTheNewNamesMembersAndLeavesTheOldOnes) {
  ASSERT_TRUE(members_);
  ASSERT_OK(members_->put(acme_, "hr", {"user", "alice", "owner", 1000.5, "user:alice"}));
  ASSERT_OK(members_->put(acme_, "hr", {"group", "staff", "reader", 1001, "user:alice"}));
  ASSERT_OK(members_->put(acme_, "people", {"user", "stale", "owner", 1, "user:stale"}));  // left over
  ASSERT_OK(members_->put(globex_, "hr", {"user", "mallory", "owner", 1004, "user:mallory"}));
  ASSERT_OK(members_->copy_collection(acme_, "hr", "people"));
  EXPECT_EQ(listed(acme_, "people"), (std::vector<std::string>{"group:staff=reader", "user:alice=owner"}));
  EXPECT_EQ(listed(acme_, "hr"), (std::vector<std::string>{"group:staff=reader", "user:alice=owner"}))
      << "the old name keeps its members until the caller removes them";
  auto copied = members_->members(acme_, "people");
  ASSERT_OK(copied);
  EXPECT_DOUBLE_EQ((*copied)[1].added_at, 1000.5);
  EXPECT_EQ((*copied)[1].added_by, "user:alice");
  EXPECT_EQ(listed(globex_, "hr"), std::vector<std::string>{"user:mallory=owner"});
  EXPECT_TRUE(listed(globex_, "people").empty()) << "another tenant's members are never copied";
  ASSERT_OK(members_->remove_collection(acme_, "hr"));
  EXPECT_TRUE(listed(acme_, "hr").empty());
  EXPECT_EQ(listed(acme_, "people").size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Stores, MemberStoreTest, ::testing::Values("sqlite", "postgres"),
                         kotae::testing::backend_name);

}  // namespace
}  // namespace kotae::store
