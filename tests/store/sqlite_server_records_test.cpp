// The SQLite back-end's own file, FOLDER/server.db (store/sqlite_schema.h): each component's tables and
// its row in kotae_schema_versions, a file a newer Kotae wrote refused, Kotae 0.1's files taken in
// (conversations.db, frozen in tests/store/data/sqlite_conversations_0.1.sql; a collection's
// jobs/ID.json, frozen in tests/store/data/job_record_0.1.json), the API keys and the change follower
// that hears another connection's commit.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "store/sqlite_api_keys.h"
#include "store/sqlite_audit_trail.h"
#include "store/sqlite_change_follower.h"
#include "store/sqlite_conversations.h"
#include "store/sqlite_job_records.h"
#include "store/sqlite_members.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_sessions.h"

namespace kotae::store {
namespace {

namespace fs = std::filesystem;

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class SqliteServerRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("kotae-server-records-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  // "component=version,..." as kotae_schema_versions has them.
  std::string versions() {
    auto db = Database::open(server_database_file(folder_), Database::Mode::read_write);
    if (!db) return "(" + db.error().message + ")";
    auto select = (*db)->prepare("SELECT component || '=' || version FROM kotae_schema_versions ORDER BY component");
    if (!select) return "(" + select.error().message + ")";
    std::string out;
    for (auto row = select->step(); row && *row; row = select->step()) {
      if (!out.empty()) out += ',';
      out += select->column_text(0);
    }
    return out;
  }

  fs::path folder_;
};

TEST_F(SqliteServerRecordsTest, EachComponentRecordsItsVersionInOneTable) {
  ASSERT_OK(SqliteConversations::open(folder_, 10));
  ASSERT_OK(SqliteJobRecords::open(folder_));
  ASSERT_OK(SqliteApiKeys::open(folder_));
  ASSERT_OK(SqliteAuditTrail::open(folder_));
  ASSERT_OK(SqliteMembers::open(folder_));
  ASSERT_OK(SqliteSessions::open(folder_));
  EXPECT_EQ(versions(), "api_keys=1,audit=1,conversations=2,jobs=1,members=1,sessions=2");
  ASSERT_OK(SqliteJobRecords::open(folder_));  // a second open changes nothing
  EXPECT_EQ(versions(), "api_keys=1,audit=1,conversations=2,jobs=1,members=1,sessions=2");
}

TEST_F(SqliteServerRecordsTest, AComponentANewerKotaeWroteIsRefused) {
  ASSERT_OK(SqliteJobRecords::open(folder_));
  {
    auto db = Database::open(server_database_file(folder_), Database::Mode::read_write);
    ASSERT_OK(db);
    ASSERT_OK((*db)->execute("UPDATE kotae_schema_versions SET version = 7 WHERE component = 'jobs'"));
  }
  auto opened = SqliteJobRecords::open(folder_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::unsupported);
  EXPECT_NE(opened.error().message.find("jobs at schema version 7"), std::string::npos) << opened.error().message;
  ASSERT_OK(SqliteApiKeys::open(folder_));  // another component is not held back by it
}

TEST_F(SqliteServerRecordsTest, Release0_1ConversationsFileIsTakenInOnce) {
  {
    auto old = Database::open(folder_ / "conversations.db", Database::Mode::read_write_create);
    ASSERT_OK(old);
    ASSERT_OK((*old)->execute(read_file(KOTAE_TEST_DATA_DIR "/sqlite_conversations_0.1.sql")));
  }
  auto opened = SqliteConversations::open(folder_, 10);
  ASSERT_OK(opened);
  auto got = (*opened)->get("alice", "conv_0123456789abcdef");
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->summary.title, "What is WAL?");
  EXPECT_EQ((*got)->turns.at(0).at("answer"), "Write-ahead logging.");
  EXPECT_FALSE(fs::exists(folder_ / "conversations.db"));
  EXPECT_TRUE(fs::exists(folder_ / "conversations.db.imported"));
  EXPECT_EQ(versions(), "conversations=2");
  opened->reset();
  auto again = SqliteConversations::open(folder_, 10);  // nothing left to take in; the row stays
  ASSERT_OK(again);
  auto listed = (*again)->list("alice", "", 10);
  ASSERT_OK(listed);
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(SqliteServerRecordsTest, Release0_1JobRecordsAreTakenInAndTheirFolderGoes) {
  const fs::path collection = folder_ / "collections" / "faq";
  fs::create_directories(collection / "jobs");
  fs::copy_file(KOTAE_TEST_DATA_DIR "/job_record_0.1.json", collection / "jobs" / "job_0123456789abcdef.json");
  auto records = SqliteJobRecords::open(folder_);
  ASSERT_OK(records);
  auto imported = (*records)->import_0_1_records(collection, "alice", "faq");
  ASSERT_OK(imported);
  EXPECT_EQ(*imported, 1u);
  EXPECT_FALSE(fs::exists(collection / "jobs"));
  auto of_faq = (*records)->of_collection("alice", "faq");
  ASSERT_OK(of_faq);
  ASSERT_EQ(of_faq->size(), 1u);
  EXPECT_EQ(of_faq->front(), read_file(KOTAE_TEST_DATA_DIR "/job_record_0.1.json"));

  // A file that is not a record stays, with its folder, for the operator to look at.
  fs::create_directories(collection / "jobs");
  std::ofstream(collection / "jobs" / "notes.txt") << "not a record";
  imported = (*records)->import_0_1_records(collection, "alice", "faq");
  ASSERT_OK(imported);
  EXPECT_EQ(*imported, 0u);
  EXPECT_TRUE(fs::exists(collection / "jobs" / "notes.txt"));
}

TEST_F(SqliteServerRecordsTest, ApiKeysAreAddedOrReplacedByTheirHash) {
  auto keys = SqliteApiKeys::open(folder_);
  ASSERT_OK(keys);
  ASSERT_OK((*keys)->put({{"name", "a"}, {"tenant", "alice"}, {"sha256", "aa"}}));
  ASSERT_OK((*keys)->put({{"name", "b"}, {"tenant", "bob"}, {"sha256", "bb"}}));
  ASSERT_OK((*keys)->put({{"name", "a2"}, {"tenant", "alice"}, {"sha256", "aa"}, {"admin", true}}));
  auto entries = (*keys)->entries();
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0]["name"], "a2");  // replaced where it was
  EXPECT_EQ((*entries)[1]["name"], "b");
}

TEST_F(SqliteServerRecordsTest, TheFollowerHearsAnotherConnectionsCommit) {
  std::atomic<int> calls{0};
  // A long period: what it hears within the test is the commit, not the clock.
  auto follower = SqliteChangeFollower::start(folder_, std::chrono::hours(1), [&] { ++calls; });
  ASSERT_OK(follower);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(calls.load(), 0);
  auto keys = SqliteApiKeys::open(folder_);  // another connection, as `kotae keygen --store` opens
  ASSERT_OK(keys);
  ASSERT_OK((*keys)->put({{"name", "a"}, {"tenant", "alice"}, {"sha256", "aa"}}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (calls.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(calls.load(), 1);
  EXPECT_GE((*follower)->notifications(), 1u);
}

}  // namespace
}  // namespace kotae::store
