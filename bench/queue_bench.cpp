// kotae-bench-queue: the work queue's own cost per document, embedding and storing excluded: an entry
// (job, tenant, collection and file name, as an upload makes) enqueued by one connection (the API
// replica), taken by another (a worker) and acknowledged, one document at a time, against a real Redis.
// Prints one JSON line (name=queue_overhead, p50/p95/p99 ms, documents/s through one worker) and a second
// for enqueueing alone (what an upload adds to the API).

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <thread>

#include "bench/latency_stats.h"
#include "queue/work_queue.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  CLI::App app{"the Redis Streams work queue's cost per document"};
  std::string url;
  std::size_t documents = 2000;
  app.add_option("--queue", url, "redis:// or unix:// URL of a Redis server")->required();
  app.add_option("--documents", documents, "documents sent through");
  CLI11_PARSE(app, argc, argv);

  auto connect = [&] {
    auto connection = kotae::queue::RedisConnection::connect(url);
    if (!connection) {
      std::cerr << "kotae-bench-queue: " << connection.error().message << "\n";
      std::exit(2);
    }
    kotae::queue::WorkQueueOptions options;
    options.name = "bench:" + std::to_string(::getpid());
    return kotae::queue::WorkQueue(std::move(*connection), options);
  };
  auto api = connect();
  auto worker = connect();
  auto fail = [](const kotae::Error& error) {
    std::cerr << "kotae-bench-queue: " << error.message << "\n";
    std::exit(2);
  };

  std::vector<double> round_trip, enqueue;
  const auto started = Clock::now();
  for (std::size_t i = 0; i < documents; ++i) {
    const auto t0 = Clock::now();
    auto id = api.enqueue(
        kotae::queue::Priority::interactive, "tenant-" + std::to_string(i % 4),
        {{"job", "job_0123456789abcdef"}, {"collection", "docs"}, {"file", "file-" + std::to_string(i) + ".md"}});
    if (!id) fail(id.error());
    const auto t1 = Clock::now();
    auto taken = worker.take("worker-1");
    if (!taken) fail(taken.error());
    for (const auto& entry : *taken) {
      if (auto done = worker.acknowledge(entry); !done) fail(done.error());
    }
    const auto t2 = Clock::now();
    enqueue.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    round_trip.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::cout << kotae::bench::latency({{"name", "queue_overhead"},
                                      {"documents", documents},
                                      {"per_s", static_cast<double>(documents) / seconds}},
                                     round_trip)
                   .dump()
            << "\n"
            << kotae::bench::latency({{"name", "queue_enqueue"}, {"documents", documents}}, enqueue).dump()
            << std::endl;
  return 0;
}
