// The conversation stores, each against a real database: SQLite (server/local_conversations) in a
// temporary folder, and PostgreSQL (server/shared_conversations) on the server CTest starts, each test
// in tenants of its own. The same cases run on both: records read back as written, another tenant's
// never seen, lists in order with their filter and limit, a turn stored only over the turns it was
// built on, renames and deletions, the per-tenant bound, and (SQLite) a reopened file.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/random_id.h"
#include "store/postgres_conversations.h"
#include "store/postgres_record_store.h"
#include "store/sqlite_conversations.h"
#include "support/fixture_url.h"

namespace kotae::server {
namespace {

using store::ConversationRecord;
using store::ConversationStore;
using store::ConversationSummary;
using store::PostgresConversations;
using store::SqliteConversations;

namespace fs = std::filesystem;

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

constexpr std::size_t kPerTenant = 3;

ConversationRecord conversation(const std::string& collection, double at, int turns = 1) {
  ConversationRecord r;
  r.summary = {random_id("conv_"), collection, "Where is the notebook?", at, at, static_cast<std::size_t>(turns)};
  for (int i = 0; i < turns; ++i) {
    r.turns.push_back({{"question", std::to_string(i)},
                       {"answer", "a [1]"},
                       {"covered", true},
                       {"sources", nlohmann::json::array()},
                       {"citations", nlohmann::json::array()},
                       {"created_at", at}});
  }
  return r;
}

std::vector<std::string> ids(const std::vector<ConversationSummary>& listed) {
  std::vector<std::string> out;
  for (const auto& s : listed) out.push_back(s.id);
  return out;
}

class ConversationStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // Tenants of this test and run alone: the PostgreSQL server is shared by every test.
    const std::string unique = std::to_string(::getpid()) + "-" + random_id("");
    alice_ = "alice-" + unique;
    bob_ = "bob-" + unique;
    folder_ = fs::temp_directory_path() / ("kotae-conversations-" + unique);
    fs::create_directories(folder_);
    open();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(folder_);
  }
  void open() {
    store_.reset();
    if (GetParam() == "sqlite") {
      auto opened = SqliteConversations::open(folder_, kPerTenant);
      ASSERT_OK(opened);
      store_ = std::move(*opened);
      return;
    }
    const std::string url = kotae::testing::fixture_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
    auto connection = store::PgConnection::connect(url);
    ASSERT_OK(connection);
    ASSERT_OK(store::migrate_postgres_schema(**connection));
    store_ = std::make_unique<PostgresConversations>(std::make_shared<store::PgPool>(url), kPerTenant);
  }
  ConversationRecord created(const std::string& tenant, const std::string& collection, double at) {
    auto record = conversation(collection, at);
    auto stored = store_->create(tenant, record);
    EXPECT_TRUE(stored.ok()) << stored.error().message;
    return record;
  }
  std::vector<std::string> listed(const std::string& tenant, const std::string& collection = "",
                                  std::size_t limit = 100) {
    auto list = store_->list(tenant, collection, limit);
    EXPECT_TRUE(list.ok()) << list.error().message;
    return list.ok() ? ids(*list) : std::vector<std::string>{"(failed)"};
  }

  std::string alice_, bob_;
  fs::path folder_;
  std::unique_ptr<ConversationStore> store_;
};

TEST_P(ConversationStoreTest, ReadsBackWhatWasStoredAndNeverAnotherTenants) {
  ASSERT_TRUE(store_);
  const auto record = conversation("faq", 1000.25, 2);
  ASSERT_OK(store_->create(alice_, record));
  auto got = store_->get(alice_, record.summary.id);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  const auto& s = (*got)->summary;
  EXPECT_EQ(s.id, record.summary.id);
  EXPECT_EQ(s.collection, "faq");
  EXPECT_EQ(s.title, record.summary.title);
  EXPECT_EQ(s.created_at, 1000.25);
  EXPECT_EQ(s.updated_at, 1000.25);
  EXPECT_EQ(s.turns, 2u);
  EXPECT_EQ((*got)->turns, record.turns);

  auto as_bob = store_->get(bob_, record.summary.id);
  ASSERT_OK(as_bob);
  EXPECT_FALSE(as_bob->has_value());
  EXPECT_TRUE(listed(bob_).empty());
  auto renamed = store_->rename(bob_, record.summary.id, "mine now", 2000);
  ASSERT_OK(renamed);
  EXPECT_FALSE(renamed->has_value());
  auto removed = store_->remove(bob_, record.summary.id);
  ASSERT_OK(removed);
  EXPECT_FALSE(*removed);
  EXPECT_EQ(listed(alice_), std::vector<std::string>{record.summary.id});
}

TEST_P(ConversationStoreTest, ListsMostRecentlyUpdatedFirstByCollectionAndLimit) {
  ASSERT_TRUE(store_);
  const auto a = created(alice_, "faq", 10), b = created(alice_, "notes", 20), c = created(alice_, "faq", 30);
  EXPECT_EQ(listed(alice_), (std::vector<std::string>{c.summary.id, b.summary.id, a.summary.id}));
  EXPECT_EQ(listed(alice_, "faq"), (std::vector<std::string>{c.summary.id, a.summary.id}));
  EXPECT_EQ(listed(alice_, "", 2), (std::vector<std::string>{c.summary.id, b.summary.id}));
  EXPECT_TRUE(listed(alice_, "none").empty());
  auto list = store_->list(alice_, "notes", 10);
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].turns, 1u);
  EXPECT_EQ((*list)[0].created_at, 20);
}

TEST_P(ConversationStoreTest, ATurnIsStoredOnlyOverTheTurnsItWasBuiltOn) {
  ASSERT_TRUE(store_);
  auto record = created(alice_, "faq", 10);
  ASSERT_OK(store_->rename(alice_, record.summary.id, "Renamed", 15));
  auto next = record;
  next.turns.push_back(record.turns[0]);
  next.summary.turns = 2;
  next.summary.updated_at = 20;
  auto stored = store_->update_turns(alice_, next, 1);
  ASSERT_OK(stored);
  EXPECT_TRUE(*stored);
  // Built on one turn while the conversation has two (another replica answered meanwhile): refused.
  auto stale = next;
  stale.turns.push_back(record.turns[0]);
  stale.summary.turns = 3;
  stored = store_->update_turns(alice_, stale, 1);
  ASSERT_OK(stored);
  EXPECT_FALSE(*stored);
  stored = store_->update_turns(bob_, stale, 2);  // another tenant's
  ASSERT_OK(stored);
  EXPECT_FALSE(*stored);

  auto got = store_->get(alice_, record.summary.id);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->summary.turns, 2u);
  EXPECT_EQ((*got)->turns.size(), 2u);
  EXPECT_EQ((*got)->summary.updated_at, 20);
  EXPECT_EQ((*got)->summary.title, "Renamed") << "a turn leaves the title as it is";
  EXPECT_EQ((*got)->summary.created_at, 10);
}

TEST_P(ConversationStoreTest, RenamesAndRemoves) {
  ASSERT_TRUE(store_);
  const auto a = created(alice_, "faq", 10), b = created(alice_, "faq", 20);
  auto renamed = store_->rename(alice_, a.summary.id, "Upgrades, étés", 30);
  ASSERT_OK(renamed);
  ASSERT_TRUE(renamed->has_value());
  EXPECT_EQ((*renamed)->title, "Upgrades, étés");
  EXPECT_EQ((*renamed)->updated_at, 30);
  EXPECT_EQ((*renamed)->turns, 1u);
  EXPECT_EQ(listed(alice_).front(), a.summary.id) << "a rename is an update";

  auto removed = store_->remove(alice_, a.summary.id);
  ASSERT_OK(removed);
  EXPECT_TRUE(*removed);
  removed = store_->remove(alice_, a.summary.id);
  ASSERT_OK(removed);
  EXPECT_FALSE(*removed);
  auto got = store_->get(alice_, a.summary.id);
  ASSERT_OK(got);
  EXPECT_FALSE(got->has_value());
  auto gone = store_->rename(alice_, a.summary.id, "x", 40);
  ASSERT_OK(gone);
  EXPECT_FALSE(gone->has_value());
  EXPECT_EQ(listed(alice_), std::vector<std::string>{b.summary.id});
}

TEST_P(ConversationStoreTest, BeyondTheBoundATenantsLeastRecentlyUpdatedGoNeverAnothers) {
  ASSERT_TRUE(store_);
  const auto b1 = created(bob_, "faq", 1), b2 = created(bob_, "faq", 2);
  const auto a1 = created(alice_, "faq", 10), a2 = created(alice_, "faq", 20), a3 = created(alice_, "faq", 30);
  // a1 answered again: now a2 is the least recently updated.
  auto again = a1;
  again.summary.updated_at = 40;
  ASSERT_OK(store_->update_turns(alice_, again, 1));
  const auto a4 = created(alice_, "faq", 50);
  EXPECT_EQ(listed(alice_), (std::vector<std::string>{a4.summary.id, a1.summary.id, a3.summary.id}));
  EXPECT_EQ(listed(bob_), (std::vector<std::string>{b2.summary.id, b1.summary.id}));
  const auto a5 = created(alice_, "faq", 60);
  EXPECT_EQ(listed(alice_), (std::vector<std::string>{a5.summary.id, a4.summary.id, a1.summary.id}));
  (void)a2;
}

TEST_P(ConversationStoreTest, ACollectionsConversationsGoWithIt) {
  ASSERT_TRUE(store_);
  const auto a = created(alice_, "faq", 10), b = created(alice_, "notes", 20), c = created(bob_, "faq", 30);
  ASSERT_OK(store_->remove_collection(alice_, "faq"));
  EXPECT_EQ(listed(alice_), std::vector<std::string>{b.summary.id});
  EXPECT_EQ(listed(bob_), std::vector<std::string>{c.summary.id}) << "another tenant's collection of that name stays";
  (void)a;
}

TEST_P(ConversationStoreTest, ARenamedCollectionsConversationsFollowIt) {
  ASSERT_TRUE(store_);
  const auto a = created(alice_, "faq", 10), b = created(alice_, "notes", 20), c = created(bob_, "faq", 30);
  ASSERT_OK(store_->rename_collection(alice_, "faq", "handbook"));
  EXPECT_TRUE(listed(alice_, "faq").empty());
  EXPECT_EQ(listed(alice_, "handbook"), std::vector<std::string>{a.summary.id});
  EXPECT_EQ(listed(alice_, "notes"), std::vector<std::string>{b.summary.id});
  EXPECT_EQ(listed(bob_, "faq"), std::vector<std::string>{c.summary.id})
      << "another tenant's collection of that name stays";
  auto got = store_->get(alice_, a.summary.id);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->summary.collection, "handbook");
  EXPECT_EQ((*got)->summary.updated_at, 10) << "a rename of its collection is no update of the conversation";
  EXPECT_EQ((*got)->turns, a.turns);
}

TEST_P(ConversationStoreTest, WhatWasStoredIsThereAfterReopening) {
  ASSERT_TRUE(store_);
  const auto record = created(alice_, "faq", 10);
  open();
  ASSERT_TRUE(store_);
  auto got = store_->get(alice_, record.summary.id);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->turns, record.turns);
  if (GetParam() == "sqlite") {
    EXPECT_TRUE(fs::exists(folder_ / "server.db"));
  }
}

TEST_P(ConversationStoreTest, APersonsConversationsAreTheirsAndThoseWithoutAnOwnerTheTenants) {
  ASSERT_TRUE(store_);
  const store::ConversationOwner ann{alice_, "user:ann"}, ben{alice_, "user:ben"};
  const auto anns = conversation("faq", 10), shared = conversation("faq", 20);
  ASSERT_OK(store_->create(ann, anns));
  ASSERT_OK(store_->create(alice_, shared));  // no person: the tenant's, as before people
  EXPECT_EQ(listed(alice_), std::vector<std::string>{shared.summary.id});
  auto bens = store_->list(ben, "", 100);
  ASSERT_OK(bens);
  EXPECT_EQ(ids(*bens), std::vector<std::string>{shared.summary.id});
  auto annes = store_->list(ann, "", 100);
  ASSERT_OK(annes);
  EXPECT_EQ(ids(*annes), (std::vector<std::string>{shared.summary.id, anns.summary.id}));
  auto seen = store_->get(ben, anns.summary.id);
  ASSERT_OK(seen);
  EXPECT_FALSE(seen->has_value());
  auto renamed = store_->rename(ben, anns.summary.id, "mine now", 30);
  ASSERT_OK(renamed);
  EXPECT_FALSE(renamed->has_value());
  auto removed = store_->remove(ben, anns.summary.id);
  ASSERT_OK(removed);
  EXPECT_FALSE(*removed);
  auto next = anns;
  next.turns.push_back(next.turns[0]);
  next.summary.turns = 2;
  auto updated = store_->update_turns(ben, next, 1);
  ASSERT_OK(updated);
  EXPECT_FALSE(*updated);
  updated = store_->update_turns(ann, next, 1);
  ASSERT_OK(updated);
  EXPECT_TRUE(*updated);
  auto own = store_->get(ann, anns.summary.id);
  ASSERT_OK(own);
  ASSERT_TRUE(own->has_value());
  EXPECT_EQ((*own)->summary.turns, 2u);
}

INSTANTIATE_TEST_SUITE_P(Stores, ConversationStoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kotae::server
