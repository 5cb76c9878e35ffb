// The Redis Streams work queue against a real redis-server (7, from Debian) that CTest starts
// (tests/support/redis_server, fixture redis_server), or that a test starts and kills itself: entries
// taken and acknowledged, interactive before bulk, tenants in turn, entries of a dead consumer claimed
// by another, attempts counted up to the dead-letter stream, and nothing acknowledged lost when Redis is
// SIGKILLed (append-only file, fsynced on every write).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "queue/redis_connection.h"
#include "queue/work_queue.h"
#include "support/test_data.h"

namespace kotae::queue {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

std::string server_url() {
  std::ifstream file(KOTAE_TEST_REDIS_URL_FILE);
  std::string url;
  std::getline(file, url);
  return url;
}

class WorkQueueTest : public ::testing::Test {
 protected:
  // A queue of the test's own (its own key prefix) on the shared server.
  WorkQueue queue(WorkQueueOptions options = {}) {
    auto connection = RedisConnection::connect(server_url());
    EXPECT_TRUE(connection.ok()) << (connection.ok() ? "" : connection.error().message);
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    options.name = std::string("test:") + test->name() + ":" + std::to_string(::getpid());
    return WorkQueue(std::move(*connection), options);
  }
};

TEST_F(WorkQueueTest, EntriesAreTakenOnceAndLeaveWhenAcknowledged) {
  auto q = queue();
  auto id = q.enqueue(Priority::interactive, "alice",
                      {{"job", "j1"}, {"file", "a.md"}, {"bytes", std::string("\0\x01\xff", 3)}});
  ASSERT_OK(id);
  auto stats = q.stats();
  ASSERT_OK(stats);
  EXPECT_EQ(stats->waiting, 1);
  EXPECT_EQ(stats->pending, 0);

  auto taken = q.take("worker-1");
  ASSERT_OK(taken);
  ASSERT_EQ(taken->size(), 1u);
  EXPECT_EQ((*taken)[0].id, *id);
  EXPECT_EQ((*taken)[0].fields.at("file"), "a.md");
  EXPECT_EQ((*taken)[0].fields.at("bytes"), std::string("\0\x01\xff", 3));  // binary safe
  EXPECT_EQ((*taken)[0].attempts, 1);
  auto again = q.take("worker-2");
  ASSERT_OK(again);
  EXPECT_TRUE(again->empty()) << "an entry is delivered to one consumer";
  stats = q.stats();
  ASSERT_OK(stats);
  EXPECT_EQ(stats->waiting, 0);
  EXPECT_EQ(stats->pending, 1);

  ASSERT_OK(q.acknowledge((*taken)[0]));
  stats = q.stats();
  ASSERT_OK(stats);
  EXPECT_EQ(stats->pending, 0);
  EXPECT_EQ(stats->waiting, 0);
}

TEST_F(WorkQueueTest, InteractiveWorkIsTakenBeforeBulk) {
  auto q = queue();
  for (int i = 0; i < 3; ++i) ASSERT_OK(q.enqueue(Priority::bulk, "alice", {{"n", "bulk-" + std::to_string(i)}}));
  ASSERT_OK(q.enqueue(Priority::interactive, "alice", {{"n", "upload"}}));
  auto first = q.take("w");
  ASSERT_OK(first);
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].fields.at("n"), "upload");
  auto next = q.take("w");
  ASSERT_OK(next);
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].fields.at("n"), "bulk-0");
}

TEST_F(WorkQueueTest, OneTenantsFloodDoesNotStarveAnother) {
  auto q = queue();
  for (int i = 0; i < 200; ++i) ASSERT_OK(q.enqueue(Priority::interactive, "flood", {{"n", std::to_string(i)}}));
  ASSERT_OK(q.enqueue(Priority::interactive, "quiet", {{"n", "mine"}}));
  // The quiet tenant's one upload comes with the first take, not after the flood's 200.
  auto taken = q.take("w");
  ASSERT_OK(taken);
  std::set<std::string> tenants;
  for (const auto& entry : *taken) tenants.insert(entry.stream.substr(entry.stream.rfind(':') + 1));
  EXPECT_EQ(tenants, (std::set<std::string>{"flood", "quiet"}));
  EXPECT_EQ(taken->size(), 2u);
}

// An answer worker takes one task at a time: the cap holds, and the tenants still take turns.
TEST_F(WorkQueueTest, ACappedTakeGivesTenantsTurns) {
  auto q = queue();
  for (int i = 0; i < 50; ++i) ASSERT_OK(q.enqueue(Priority::interactive, "flood", {{"n", std::to_string(i)}}));
  ASSERT_OK(q.enqueue(Priority::interactive, "quiet", {{"n", "mine"}}));
  std::vector<std::string> tenants;
  for (int i = 0; i < 2; ++i) {
    auto taken = q.take("w", std::chrono::milliseconds(0), 1);
    ASSERT_OK(taken);
    ASSERT_EQ(taken->size(), 1u);
    EXPECT_EQ((*taken)[0].attempts, 1);
    tenants.push_back((*taken)[0].stream.substr((*taken)[0].stream.rfind(':') + 1));
  }
  std::sort(tenants.begin(), tenants.end());
  EXPECT_EQ(tenants, (std::vector<std::string>{"flood", "quiet"})) << "the quiet tenant's task within the first two";
  auto stats = q.stats();
  ASSERT_OK(stats);
  EXPECT_EQ(stats->pending, 2);
  EXPECT_EQ(stats->waiting, 49);
}

TEST_F(WorkQueueTest, ADeadConsumersEntriesAreClaimedThenDeadLetteredAfterTheirAttempts) {
  WorkQueueOptions options;
  options.claim_idle = std::chrono::milliseconds(100);
  options.max_attempts = 2;
  auto q = queue(options);
  ASSERT_OK(q.enqueue(Priority::interactive, "alice", {{"file", "poison.pdf"}}));
  auto taken = q.take("dies");
  ASSERT_OK(taken);
  ASSERT_EQ(taken->size(), 1u);
  auto early = q.claim_abandoned("rescuer", 10);
  ASSERT_OK(early);
  EXPECT_TRUE(early->empty()) << "claimed before it was idle for claim_idle";

  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto claimed = q.claim_abandoned("rescuer", 10);
  ASSERT_OK(claimed);
  ASSERT_EQ(claimed->size(), 1u);
  EXPECT_EQ((*claimed)[0].fields.at("file"), "poison.pdf");
  EXPECT_EQ((*claimed)[0].attempts, 2);
  EXPECT_FALSE(q.exhausted((*claimed)[0]));

  // Backoff: the second attempt's entry waits twice claim_idle before a third.
  std::this_thread::sleep_for(std::chrono::milliseconds(130));
  auto too_soon = q.claim_abandoned("another", 10);
  ASSERT_OK(too_soon);
  EXPECT_TRUE(too_soon->empty()) << "claimed again before its backoff (2 × claim_idle)";
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  auto third = q.claim_abandoned("another", 10);
  ASSERT_OK(third);
  ASSERT_EQ(third->size(), 1u);
  EXPECT_EQ((*third)[0].attempts, 3);
  ASSERT_TRUE(q.exhausted((*third)[0]));
  ASSERT_OK(q.dead_letter((*third)[0], "the loader crashed 3 times"));
  auto letters = q.dead_letters(10);
  ASSERT_OK(letters);
  ASSERT_EQ(letters->size(), 1u);
  EXPECT_EQ((*letters)[0].at("reason"), "the loader crashed 3 times");
  EXPECT_EQ((*letters)[0].at("field:file"), "poison.pdf");
  auto stats = q.stats();
  ASSERT_OK(stats);
  EXPECT_EQ(stats->dead_letters, 1);
  EXPECT_EQ(stats->pending, 0);
  EXPECT_EQ(stats->waiting, 0);
}

TEST_F(WorkQueueTest, AnEntryItsWorkerExtendsIsNotClaimed) {
  WorkQueueOptions options;
  options.claim_idle = std::chrono::milliseconds(100);
  auto q = queue(options);
  ASSERT_OK(q.enqueue(Priority::interactive, "alice", {{"file", "long.pdf"}}));
  auto taken = q.take("busy");
  ASSERT_OK(taken);
  ASSERT_EQ(taken->size(), 1u);
  for (int beat = 0; beat < 4; ++beat) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    ASSERT_OK(q.extend(*taken, "busy"));
  }
  auto claimed = q.claim_abandoned("rescuer", 10);
  ASSERT_OK(claimed);
  EXPECT_TRUE(claimed->empty()) << "taken from a worker that said it was still working on it";
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  claimed = q.claim_abandoned("rescuer", 10);
  ASSERT_OK(claimed);
  EXPECT_EQ(claimed->size(), 1u) << "its worker went silent: the entry is claimed";
}

TEST_F(WorkQueueTest, ABlockingTakeWakesForANewEntry) {
  auto q = queue({});
  ASSERT_OK(q.enqueue(Priority::bulk, "alice", {{"file", "first.md"}}));
  auto first = q.take("w");
  ASSERT_OK(first);
  ASSERT_OK(q.acknowledge(first->at(0)));
  std::thread producer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto other = queue({});
    (void)other.enqueue(Priority::bulk, "alice", {{"file", "second.md"}});
  });
  const auto start = std::chrono::steady_clock::now();
  auto taken = q.take("w", std::chrono::milliseconds(5000));
  const auto waited = std::chrono::steady_clock::now() - start;
  producer.join();
  ASSERT_OK(taken);
  ASSERT_EQ(taken->size(), 1u);
  EXPECT_EQ(taken->at(0).fields.at("file"), "second.md");
  EXPECT_LT(waited, std::chrono::milliseconds(4000)) << "the take waited out its block instead of waking";
}

TEST_F(WorkQueueTest, NothingAcknowledgedIsLostWhenRedisIsKilled) {
  const auto dir = testing::fresh_temp_dir("kotae-redis");
  const std::string script = std::string(KOTAE_TEST_SUPPORT_DIR) + "/redis_server";
  auto run = [&](const std::string& action) {
    return std::system((script + " " + action + " " + dir.string() + " > " + (dir / "url").string()).c_str());
  };
  ASSERT_EQ(run("start"), 0);
  const std::string url = "unix://" + (dir / "redis.sock").string();
  {
    auto connection = RedisConnection::connect(url);
    ASSERT_OK(connection);
    WorkQueue q(std::move(*connection), {});
    const std::string tenants[] = {"t0", "t1", "t2"};
    for (int i = 0; i < 20; ++i)
      ASSERT_OK(q.enqueue(Priority::interactive, tenants[i % 3], {{"n", std::to_string(i)}}));
  }
  ASSERT_EQ(run("kill"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto lost = RedisConnection::connect(url);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().code, ErrorCode::unavailable);

  ASSERT_EQ(run("start"), 0);
  auto connection = RedisConnection::connect(url);
  ASSERT_OK(connection);
  WorkQueue q(std::move(*connection), {});
  std::set<std::string> seen;
  while (true) {
    auto taken = q.take("after-restart");
    ASSERT_OK(taken);
    if (taken->empty()) break;
    for (const auto& entry : *taken) {
      seen.insert(entry.fields.at("n"));
      ASSERT_OK(q.acknowledge(entry));
    }
  }
  EXPECT_EQ(seen.size(), 20u) << "every enqueued entry survived the kill";
  run("stop");
  std::filesystem::remove_all(dir);
}

TEST(RedisUrl, ParsesTcpAndUnixAndNeverPrintsAPassword) {
  auto tcp = parse_redis_url("redis://:s3cret@queue.internal:6380/2");
  ASSERT_OK(tcp);
  EXPECT_EQ(tcp->host, "queue.internal");
  EXPECT_EQ(tcp->port, 6380);
  EXPECT_EQ(tcp->database, 2);
  EXPECT_EQ(tcp->password, "s3cret");
  auto unix_socket = parse_redis_url("unix:///run/redis/redis.sock?db=1");
  ASSERT_OK(unix_socket);
  EXPECT_EQ(unix_socket->socket, "/run/redis/redis.sock");
  EXPECT_EQ(unix_socket->database, 1);
  EXPECT_FALSE(parse_redis_url("http://queue").ok());
  EXPECT_FALSE(parse_redis_url("redis://host:99999").ok());
  EXPECT_EQ(redacted_redis_url("redis://:s3cret@queue:6379"), "redis://***@queue:6379");
  auto unreachable = RedisConnection::connect("unix:///nonexistent/redis.sock");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().code, ErrorCode::unavailable);
}

}  // namespace
}  // namespace kotae::queue
