#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <stdexcept>
#include <thread>

#include "batch/dynamic_batcher.h"

namespace kotae::batch {
namespace {

using namespace std::chrono_literals;
using Batcher = DynamicBatcher<int, int>;

// Records every batch the worker runs.
struct Recorder : BatchObserver {
  std::mutex mutex;
  std::vector<BatchRecord> batches;
  std::atomic<int> rejected{0};
  void on_batch(const BatchRecord& r) override {
    std::lock_guard lock(mutex);
    batches.push_back(r);
  }
  void on_rejected(std::size_t) override { ++rejected; }
};

std::vector<Result<int>> doubled(std::vector<int>& requests) {
  std::vector<Result<int>> out;
  for (int r : requests) out.emplace_back(2 * r);
  return out;
}

bool ready_within(std::future<Result<int>>& f, std::chrono::milliseconds timeout) {
  return f.wait_for(timeout) == std::future_status::ready;
}

TEST(DynamicBatcher, ClosesABatchWhenItReachesMaxItems) {
  auto recorder = std::make_shared<Recorder>();
  Batcher batcher("test", {.max_items = 4, .window = 60s, .adaptive_window = false}, doubled);
  batcher.set_observer(recorder);
  std::vector<std::future<Result<int>>> futures;
  for (int i = 0; i < 4; ++i) futures.push_back(batcher.submit(i, 1));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ready_within(futures[i], 10s)) << "the batch waited for the window instead of closing at 4 items";
    EXPECT_EQ(*futures[i].get(), 2 * i);
  }
  ASSERT_EQ(recorder->batches.size(), 1u);
  EXPECT_EQ(recorder->batches[0].items, 4u);
}

TEST(DynamicBatcher, ClosesABatchWhenTheOldestRequestHasWaitedTheWindow) {
  auto recorder = std::make_shared<Recorder>();
  Batcher batcher("test", {.max_items = 100, .window = 20ms, .adaptive_window = false}, doubled);
  batcher.set_observer(recorder);
  auto a = batcher.submit(1, 1);
  auto b = batcher.submit(2, 1);
  ASSERT_TRUE(ready_within(a, 10s));
  ASSERT_TRUE(ready_within(b, 10s));
  EXPECT_EQ(*a.get(), 2);
  EXPECT_EQ(*b.get(), 4);
  ASSERT_GE(recorder->batches.size(), 1u);
  EXPECT_GE(recorder->batches[0].oldest_wait, 15ms);  // it did wait for company
}

TEST(DynamicBatcher, AdaptiveWindowWaitsOnlyWhileRequestsArriveFasterThanIt) {
  auto recorder = std::make_shared<Recorder>();
  Batcher batcher("test", {.max_items = 100, .window = 50ms}, doubled);
  batcher.set_observer(recorder);
  // A lone caller, one request at a time, 100 ms apart: nobody to wait for, so no waiting.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(batcher.submit(i, 1).get().ok());
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(recorder->batches.size(), 3u);
  EXPECT_LT(recorder->batches.back().oldest_wait, 25ms);
  // A burst: arrivals come faster than the window, so the batcher waits and batches them.
  std::vector<std::future<Result<int>>> burst;
  for (int i = 0; i < 40; ++i) burst.push_back(batcher.submit(i, 1));
  for (auto& f : burst) ASSERT_TRUE(ready_within(f, 10s));
  EXPECT_LT(recorder->batches.size(), 3u + 40u / 2);
}

TEST(DynamicBatcher, ZeroWindowRunsWithoutWaiting) {
  Batcher batcher("test", {.max_items = 100, .window = 0ms}, doubled);
  auto f = batcher.submit(21, 1);
  ASSERT_TRUE(ready_within(f, 10s));
  EXPECT_EQ(*f.get(), 42);
}

TEST(DynamicBatcher, RespectsTheTokenBudget) {
  auto recorder = std::make_shared<Recorder>();
  std::latch hold(1);
  std::atomic<bool> first{true};
  Batcher batcher("test", {.max_items = 100, .max_tokens = 10, .window = 0ms}, [&](std::vector<int>& r) {
    if (first.exchange(false)) hold.wait();  // let the rest queue up behind the first batch
    return doubled(r);
  });
  batcher.set_observer(recorder);
  std::vector<std::future<Result<int>>> futures;
  for (int i = 0; i < 6; ++i) futures.push_back(batcher.submit(i, 4));
  hold.count_down();
  for (auto& f : futures) ASSERT_TRUE(ready_within(f, 10s));
  for (const auto& b : recorder->batches) {
    EXPECT_LE(b.tokens, 10u);
    EXPECT_LE(b.items, 2u);
  }
}

TEST(DynamicBatcher, InteractiveRequestsGoBeforeBulkOnes) {
  std::latch hold(1);
  std::mutex mutex;
  std::vector<std::vector<int>> seen;
  Batcher batcher("test", {.max_items = 3, .window = 0ms}, [&](std::vector<int>& r) {
    if (r.front() == -1) hold.wait();
    std::lock_guard lock(mutex);
    seen.push_back(r);
    return doubled(r);
  });
  auto blocker = batcher.submit(-1, 1);
  while (batcher.queue_depth() != 0) std::this_thread::yield();  // the blocker is running
  std::vector<std::future<Result<int>>> futures;
  for (int i = 0; i < 3; ++i) futures.push_back(batcher.submit(100 + i, 1, Priority::bulk));
  for (int i = 0; i < 3; ++i) futures.push_back(batcher.submit(i, 1, Priority::interactive));
  hold.count_down();
  for (auto& f : futures) ASSERT_TRUE(ready_within(f, 10s));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(seen[2], (std::vector<int>{100, 101, 102}));
}

TEST(DynamicBatcher, AFullQueueRejectsWithOverloaded) {
  auto recorder = std::make_shared<Recorder>();
  std::latch hold(1);
  Batcher batcher("encoder test", {.max_items = 1, .window = 0ms, .max_queued = 2}, [&](std::vector<int>& r) {
    hold.wait();
    return doubled(r);
  });
  batcher.set_observer(recorder);
  auto running = batcher.submit(0, 1);
  while (batcher.queue_depth() != 0) std::this_thread::yield();
  auto q1 = batcher.submit(1, 1);
  auto q2 = batcher.submit(2, 1);
  auto rejected = batcher.submit(3, 1);
  ASSERT_TRUE(ready_within(rejected, 1s)) << "a full queue must answer at once";
  auto result = rejected.get();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::overloaded);
  EXPECT_NE(result.error().message.find("encoder test"), std::string::npos);
  EXPECT_EQ(recorder->rejected.load(), 1);
  hold.count_down();
  EXPECT_EQ(*q2.get(), 4);
}

TEST(DynamicBatcher, ManyThreadsGetTheirOwnAnswersInSharedBatches) {
  auto recorder = std::make_shared<Recorder>();
  Batcher batcher("test", {.max_items = 32, .window = 2ms}, [](std::vector<int>& r) {
    std::this_thread::sleep_for(1ms);  // a model run takes time; others queue meanwhile
    return doubled(r);
  });
  batcher.set_observer(recorder);
  constexpr int kThreads = 8, kEach = 50;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const int value = t * 1000 + i;
        auto r = batcher.submit(value, 1).get();
        if (!r.ok() || *r != 2 * value) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  std::size_t items = 0;
  for (const auto& b : recorder->batches) items += b.items;
  EXPECT_EQ(items, static_cast<std::size_t>(kThreads * kEach));
  EXPECT_LT(recorder->batches.size(), items / 2) << "requests from different threads were not batched together";
}

TEST(DynamicBatcher, AThrowingBatchFailsItsRequestsNotTheProcess) {
  Batcher batcher("test", {.window = 0ms},
                  [](std::vector<int>&) -> std::vector<Result<int>> { throw std::runtime_error("model exploded"); });
  auto r = batcher.submit(1, 1).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::internal);
  EXPECT_NE(r.error().message.find("model exploded"), std::string::npos);
}

TEST(DynamicBatcher, ShutdownRunsWhatIsQueued) {
  std::vector<std::future<Result<int>>> futures;
  {
    Batcher batcher("test", {.max_items = 100, .window = 60s, .adaptive_window = false}, doubled);
    for (int i = 0; i < 5; ++i) futures.push_back(batcher.submit(i, 1));
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(ready_within(futures[i], 0ms));
    EXPECT_EQ(*futures[i].get(), 2 * i);
  }
}

}  // namespace
}  // namespace kotae::batch
