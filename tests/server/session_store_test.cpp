// Sessions and sign-ins (store/sqlite_sessions, store/postgres_sessions), each against a real
// database: a session read back as written, touched, removed, and trimmed when idle or past its
// absolute expiry; its revalidation claimed by one replica at a time and its person and refresh token
// replaced; a sign-in taken once only (a replayed state finds nothing) and trimmed when stale.

#include <gtest/gtest.h>

#include "core/random_id.h"
#include "store/postgres_sessions.h"
#include "store/sqlite_sessions.h"
#include "support/store_backend_test.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

class SessionStoreTest : public kotae::testing::StoreBackendTest {
 protected:
  void SetUp() override {
    StoreBackendTest::SetUp();
    if (sqlite()) {
      auto opened = SqliteSessions::open(folder_);
      ASSERT_OK(opened);
      sessions_ = std::move(*opened);
      return;
    }
    const std::string url = postgres_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty());
    sessions_ = std::make_unique<PostgresSessions>(std::make_shared<PgPool>(url));
  }
  void TearDown() override {
    sessions_.reset();
    StoreBackendTest::TearDown();
  }
  SessionRecord session(double created, double expires) {
    SessionRecord s;
    s.id_hash = random_id("h");
    s.tenant = acme_;
    s.person = R"({"user":"alice"})";
    s.csrf = random_id("c");
    s.id_token = "eyJ.id.token";
    s.created_at = s.last_seen = s.checked_at = created;
    s.expires_at = expires;
    s.refresh_token = "sealed-refresh-1";
    return s;
  }
  bool exists(const std::string& id_hash) {
    auto found = sessions_->get(id_hash);
    EXPECT_TRUE(found.ok()) << found.error().message;
    return found.ok() && found->has_value();
  }

  std::unique_ptr<SessionStore> sessions_;
};

TEST_P(SessionStoreTest, ASessionIsReadBackTouchedRemovedAndTrimmedWhenIdleOrExpired) {
  ASSERT_TRUE(sessions_);
  const auto kept = session(1000, 9e9), idle = session(1000, 9e9), expired = session(1000, 1500);
  for (const auto* s : {&kept, &idle, &expired}) ASSERT_OK(sessions_->create(*s));
  auto found = sessions_->get(kept.id_hash);
  ASSERT_OK(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->tenant, acme_);
  EXPECT_EQ((*found)->person, R"({"user":"alice"})");
  EXPECT_EQ((*found)->csrf, kept.csrf);
  EXPECT_EQ((*found)->id_token, "eyJ.id.token");
  EXPECT_DOUBLE_EQ((*found)->expires_at, 9e9);
  ASSERT_OK(sessions_->touch(kept.id_hash, 1900));
  EXPECT_DOUBLE_EQ((*sessions_->get(kept.id_hash))->last_seen, 1900);
  ASSERT_OK(sessions_->trim(2000, 1800, 0));  // now 2000; idle since before 1800 goes
  EXPECT_TRUE(exists(kept.id_hash));
  EXPECT_FALSE(exists(idle.id_hash));
  EXPECT_FALSE(exists(expired.id_hash));
  ASSERT_OK(sessions_->remove(kept.id_hash));
  EXPECT_FALSE(exists(kept.id_hash));
}

TEST_P(SessionStoreTest, OneReplicaAtATimeRevalidatesASessionAndItsPersonIsReplaced) {
  ASSERT_TRUE(sessions_);
  const auto s = session(1000, 9e9);
  ASSERT_OK(sessions_->create(s));
  EXPECT_EQ((*sessions_->get(s.id_hash))->refresh_token, "sealed-refresh-1");
  EXPECT_DOUBLE_EQ((*sessions_->get(s.id_hash))->checked_at, 1000);
  // Checked at 1000: not due for a claim that wants "not checked since 999".
  auto early = sessions_->claim_check(s.id_hash, 1200, 999);
  ASSERT_OK(early);
  EXPECT_FALSE(*early);
  auto first = sessions_->claim_check(s.id_hash, 1400, 1100);
  ASSERT_OK(first);
  EXPECT_TRUE(*first);
  auto second = sessions_->claim_check(s.id_hash, 1400, 1100);  // the other replica, at the same moment
  ASSERT_OK(second);
  EXPECT_FALSE(*second);
  EXPECT_DOUBLE_EQ((*sessions_->get(s.id_hash))->checked_at, 1400);
  EXPECT_FALSE(*sessions_->claim_check("no-such-session", 1400, 1e9));
  ASSERT_OK(sessions_->revalidated(s.id_hash, R"({"user":"alice","groups":[]})", "sealed-refresh-2"));
  const auto after = *sessions_->get(s.id_hash);
  EXPECT_EQ(after->person, R"({"user":"alice","groups":[]})");
  EXPECT_EQ(after->refresh_token, "sealed-refresh-2");
  EXPECT_EQ(after->csrf, s.csrf);  // nothing else changes
}

TEST_P(SessionStoreTest, ASignInIsTakenOnceAndTrimmedWhenStale) {
  ASSERT_TRUE(sessions_);
  const SignInRecord fresh{random_id("s"), "nonce-1", "verifier-1", "/after", 5000};
  const SignInRecord stale{random_id("s"), "nonce-2", "verifier-2", "/", 100};
  ASSERT_OK(sessions_->begin_sign_in(fresh));
  ASSERT_OK(sessions_->begin_sign_in(stale));
  auto taken = sessions_->take_sign_in(fresh.state_hash);
  ASSERT_OK(taken);
  ASSERT_TRUE(taken->has_value());
  EXPECT_EQ((*taken)->nonce, "nonce-1");
  EXPECT_EQ((*taken)->code_verifier, "verifier-1");
  EXPECT_EQ((*taken)->return_to, "/after");
  auto replayed = sessions_->take_sign_in(fresh.state_hash);
  ASSERT_OK(replayed);
  EXPECT_FALSE(replayed->has_value());
  ASSERT_OK(sessions_->trim(6000, 0, 1000));
  auto trimmed = sessions_->take_sign_in(stale.state_hash);
  ASSERT_OK(trimmed);
  EXPECT_FALSE(trimmed->has_value());
}

INSTANTIATE_TEST_SUITE_P(Stores, SessionStoreTest, ::testing::Values("sqlite", "postgres"),
                         kotae::testing::backend_name);

}  // namespace
}  // namespace kotae::store
