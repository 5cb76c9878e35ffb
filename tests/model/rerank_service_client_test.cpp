// The reranking service client (model/rerank_service_client): the request bodies and the answer
// parser of each API, hostile answers included, and the client against loopback sockets that refuse
// connections or never answer (the timeout, the circuit breaker). Scoring against real services (Kotae's
// own /rerank, /v1/rerank and /v2/rerank) is tests/server/rerank_service_test.py.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/rerank_service_client.h"

namespace kotae {
namespace {

using nlohmann::json;

TEST(RerankServiceApi, ComesFromTheFlagOrTheUrlPath) {
  EXPECT_EQ(rerank_api_from_url("http://h:8080/rerank").value(), RerankApi::tei);
  EXPECT_EQ(rerank_api_from_url("http://h/v1/rerank").value(), RerankApi::cohere_v1);
  EXPECT_EQ(rerank_api_from_url("https://api.cohere.com/v2/rerank").value(), RerankApi::cohere_v2);
  EXPECT_EQ(rerank_api_from_url("http://h/v1/rerank/?x=1").value(), RerankApi::cohere_v1);
  EXPECT_FALSE(rerank_api_from_url("http://h/score"));
  EXPECT_EQ(parse_rerank_api("jina-v1").value(), RerankApi::cohere_v1);
  EXPECT_EQ(parse_rerank_api("cohere-v2").value(), RerankApi::cohere_v2);
  EXPECT_EQ(parse_rerank_api("tei").value(), RerankApi::tei);
  EXPECT_FALSE(parse_rerank_api("cohere-v3"));
}

TEST(RerankServiceRequest, SpeaksEachApisShape) {
  const std::vector<std::string> passages{"a", "b"};
  const auto tei = json::parse(rerank_request_body(RerankApi::tei, "", "q", passages));
  EXPECT_EQ(tei, json::parse(R"({"query": "q", "texts": ["a", "b"], "truncate": true})"));
  const auto v1 = json::parse(rerank_request_body(RerankApi::cohere_v1, "m", "q", passages));
  EXPECT_EQ(v1, json::parse(R"({"model": "m", "query": "q", "documents": ["a", "b"], "top_n": 2,
                                "return_documents": false})"));
  const auto v2 = json::parse(rerank_request_body(RerankApi::cohere_v2, "m", "q", passages));
  EXPECT_EQ(v2, json::parse(R"({"model": "m", "query": "q", "documents": ["a", "b"], "top_n": 2})"));
}

TEST(RerankServiceAnswer, PutsScoresBackInPassageOrder) {
  auto tei = parse_rerank_response(RerankApi::tei, R"([{"index": 2, "score": 0.9}, {"index": 0, "score": 0.5},
                                                       {"index": 1, "score": -3, "text": "x"}])",
                                   3);
  ASSERT_TRUE(tei) << tei.error().message;
  EXPECT_EQ(*tei, (std::vector<float>{0.5f, -3.0f, 0.9f}));
  const char* cohere = R"({"id": "r", "results": [{"index": 1, "relevance_score": 0.25},
                          {"index": 0, "relevance_score": 0.75, "document": {"text": "a"}}],
                          "meta": {"billed_units": {"search_units": 1}}})";
  for (auto api : {RerankApi::cohere_v1, RerankApi::cohere_v2}) {
    auto scores = parse_rerank_response(api, cohere, 2);
    ASSERT_TRUE(scores) << scores.error().message;
    EXPECT_EQ(*scores, (std::vector<float>{0.75f, 0.25f}));
  }
  // TEI's shape is not Cohere's, nor the reverse.
  EXPECT_FALSE(parse_rerank_response(RerankApi::cohere_v1, R"([{"index": 0, "score": 1}])", 1));
  EXPECT_FALSE(parse_rerank_response(RerankApi::tei, R"({"results": [{"index": 0, "relevance_score": 1}]})", 1));
}

TEST(RerankServiceAnswer, RefusesHostileAnswers) {
  struct Case {
    const char* what;
    const char* body;
  };
  const Case tei_cases[] = {
      {"empty", ""},
      {"malformed", R"([{"index": 0, "score": 1})"},
      {"NaN", R"([{"index": 0, "score": NaN}, {"index": 1, "score": 1}])"},
      {"NaN as text", R"([{"index": 0, "score": "NaN"}, {"index": 1, "score": 1}])"},
      {"overflowing a float", R"([{"index": 0, "score": 1e39}, {"index": 1, "score": 1}])"},
      {"overflowing a double", R"([{"index": 0, "score": 1e999}, {"index": 1, "score": 1}])"},
      {"index out of range", R"([{"index": 0, "score": 1}, {"index": 2, "score": 1}])"},
      {"negative index", R"([{"index": 0, "score": 1}, {"index": -1, "score": 1}])"},
      {"fractional index", R"([{"index": 0, "score": 1}, {"index": 1.5, "score": 1}])"},
      {"index as text", R"([{"index": 0, "score": 1}, {"index": "1", "score": 1}])"},
      {"an index twice", R"([{"index": 0, "score": 1}, {"index": 0, "score": 2}])"},
      {"too few", R"([{"index": 0, "score": 1}])"},
      {"too many", R"([{"index": 0, "score": 1}, {"index": 1, "score": 1}, {"index": 1, "score": 1}])"},
      {"no score", R"([{"index": 0, "score": 1}, {"index": 1}])"},
      {"null score", R"([{"index": 0, "score": 1}, {"index": 1, "score": null}])"},
      {"not objects", R"([1, 2])"},
      {"an object", R"({"index": 0, "score": 1})"},
      {"an error", R"({"error": "model overloaded"})"},
  };
  for (const auto& c : tei_cases) {
    auto parsed = parse_rerank_response(RerankApi::tei, c.body, 2);
    ASSERT_FALSE(parsed) << c.what;
    EXPECT_EQ(parsed.error().code, ErrorCode::corrupt) << c.what;
  }
  const Case cohere_cases[] = {
      {"no results", R"({"id": "x"})"},
      {"results not a list", R"({"results": {"index": 0, "relevance_score": 1}})"},
      {"TEI's score key", R"({"results": [{"index": 0, "score": 1}, {"index": 1, "score": 1}]})"},
      {"a list", R"([])"},
  };
  for (const auto& c : cohere_cases) {
    EXPECT_FALSE(parse_rerank_response(RerankApi::cohere_v2, c.body, 2)) << c.what;
  }
  // Deep nesting is refused before it is built.
  const std::string deep = R"({"results": [{"index": 0, "relevance_score": 1, "x": )" + std::string(10000, '[') +
                           std::string(10000, ']') + "}]}";
  auto parsed = parse_rerank_response(RerankApi::cohere_v1, deep, 1);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("deeper"), std::string::npos) << parsed.error().message;
}

// A loopback port: listening (the kernel completes connections, nobody answers) or closed (refused).
struct LoopbackPort {
  int fd = -1;
  int port = 0;
  explicit LoopbackPort(bool listening) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    socklen_t size = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
    port = ntohs(address.sin_port);
    if (listening) {
      EXPECT_EQ(::listen(fd, 16), 0);
    } else {
      ::close(fd);
      fd = -1;
    }
  }
  ~LoopbackPort() {
    if (fd >= 0) ::close(fd);
  }
  std::string url(const char* path) const { return "http://127.0.0.1:" + std::to_string(port) + path; }
};

double seconds_of(const auto& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(RerankServiceClient, ASilentServiceTimesOutAndThenItsCircuitOpens) {
  LoopbackPort silent(true);
  RerankServiceOptions options;
  options.url = silent.url("/rerank");
  options.timeout_ms = 300;
  options.failures_to_open = 2;
  options.cool_down_ms = 60000;
  options.max_batch = 2;
  auto client = RerankServiceClient::create(options);
  ASSERT_TRUE(client) << client.error().message;
  const std::vector<std::string> passages{"a", "b", "c", "d", "e"};  // three requests at once
  for (int i = 0; i < 2; ++i) {
    Result<std::vector<float>> scored = std::vector<float>{};
    const double took = seconds_of([&] { scored = (*client)->score("q", passages); });
    ASSERT_FALSE(scored);
    EXPECT_EQ(scored.error().code, ErrorCode::unavailable);
    EXPECT_NE(scored.error().message.find("within 300 ms"), std::string::npos) << scored.error().message;
    EXPECT_GE(took, 0.25);
    EXPECT_LT(took, 1.5);  // the batches wait side by side, not one after another
  }
  auto stats = (*client)->stats();
  EXPECT_TRUE(stats.circuit_open);
  EXPECT_EQ(stats.requests, 6u);
  // Open: the next call fails at once without a request.
  Result<std::vector<float>> skipped = std::vector<float>{};
  EXPECT_LT(seconds_of([&] { skipped = (*client)->score("q", passages); }), 0.05);
  ASSERT_FALSE(skipped);
  EXPECT_NE(skipped.error().message.find("skipped"), std::string::npos) << skipped.error().message;
  stats = (*client)->stats();
  EXPECT_EQ(stats.requests, 6u);
  EXPECT_EQ(stats.skipped, 1u);
}

TEST(RerankServiceClient, ARefusedConnectionFailsFastAndTheCircuitTriesAgainAfterItsCoolDown) {
  LoopbackPort closed(false);
  RerankServiceOptions options;
  options.url = closed.url("/v1/rerank");
  options.api = RerankApi::cohere_v1;
  options.failures_to_open = 1;
  options.cool_down_ms = 200;
  auto client = RerankServiceClient::create(options);
  ASSERT_TRUE(client) << client.error().message;
  const std::vector<std::string> passages{"a"};
  auto refused = (*client)->score("q", passages);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("cannot be reached"), std::string::npos) << refused.error().message;
  EXPECT_TRUE((*client)->stats().circuit_open);
  EXPECT_FALSE((*client)->score("q", passages));
  EXPECT_EQ((*client)->stats().skipped, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE((*client)->score("q", passages));  // the probe goes out, fails, and opens the circuit again
  const auto stats = (*client)->stats();
  EXPECT_EQ(stats.requests, 2u);
  EXPECT_EQ(stats.skipped, 1u);
  EXPECT_TRUE(stats.circuit_open);
  EXPECT_TRUE((*client)->score("q", {}).value().empty());  // nothing to score: no request
}

TEST(RerankServiceClient, RefusesBadSettings) {
  RerankServiceOptions options;
  options.url = "ftp://h/rerank";
  EXPECT_FALSE(RerankServiceClient::create(options));
  options.url = "http:///rerank";
  EXPECT_FALSE(RerankServiceClient::create(options));
  options.url = "http://h/rerank";
  options.max_batch = 0;
  EXPECT_FALSE(RerankServiceClient::create(options));
  options.max_batch = 4;
  auto client = RerankServiceClient::create(options);
  ASSERT_TRUE(client);
  options.model = "m";
  options.api = RerankApi::cohere_v2;
  options.api_key = "secret-key";
  auto named = RerankServiceClient::create(options);
  ASSERT_TRUE(named);
  EXPECT_EQ((*named)->id(), "rerank-service:cohere-v2:m");  // never the URL or the key
}

}  // namespace
}  // namespace kotae
