// OpenAIChatClient against a real llama.cpp llama-server (serving a tiny random-weight chat model) for
// the happy paths, and against scripted loopback listeners for what a healthy server never does:
// silence, HTTP errors, malformed or oddly split event streams.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "model/openai_chat_client.h"
#include "support/llama_server.h"
#include "support/tiny_gguf.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using testing::free_port;
using testing::listen_on_loopback;
using testing::send_all;

// Reads one HTTP request (headers and a Content-Length body); empty when the peer says nothing for 5 s.
std::string read_request(int fd) {
  std::string request;
  char buffer[4096];
  std::size_t wanted = std::string::npos;
  while (wanted == std::string::npos || request.size() < wanted) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
    if (const std::size_t end = request.find("\r\n\r\n"); wanted == std::string::npos && end != std::string::npos) {
      std::size_t length = 0;
      if (const std::size_t at = request.find("Content-Length: "); at != std::string::npos && at < end) {
        length = std::stoul(request.substr(at + 16));
      }
      wanted = end + 4 + length;
    }
  }
  return request;
}

// Waits until the client hangs up or the server stops.
void hold_open(int fd, const std::atomic<bool>& stop) {
  char buffer[256];
  while (!stop) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) > 0 && ::recv(fd, buffer, sizeof buffer, 0) <= 0) return;
  }
}

// A loopback listener whose answers a test scripts: each connection's request is read whole, then
// `respond` writes the answer on that connection's own thread; the connection closes after it.
class ScriptedServer {
 public:
  using Respond = std::function<void(int fd, const std::atomic<bool>& stop)>;

  explicit ScriptedServer(Respond respond) : respond_(std::move(respond)) {
    listen_fd_ = listen_on_loopback(port_);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    accept_thread_.join();
    for (std::thread& t : connection_threads_) t.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  bool ok() const { return listen_fd_ >= 0; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int connections() const { return connections_; }
  std::string last_request() const {
    std::lock_guard lock(mutex_);
    return last_request_;
  }

 private:
  void accept_loop() {
    while (!stop_ && listen_fd_ >= 0) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      connection_threads_.emplace_back([this, fd] {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // each send() its own segment
        std::string request = read_request(fd);
        {
          std::lock_guard lock(mutex_);
          last_request_ = std::move(request);
        }
        respond_(fd, stop_);
        ::close(fd);
      });
    }
  }

  Respond respond_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_ = false;
  std::atomic<int> connections_ = 0;
  mutable std::mutex mutex_;
  std::string last_request_;
  std::thread accept_thread_;
  std::vector<std::thread> connection_threads_;
};

std::string json_answer(int status, const std::string& reason, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
         "Connection: close\r\n\r\n" + body;
}

const std::string kStreamHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

std::unique_ptr<OpenAIChatClient> make_client(OpenAIChatOptions options) {
  auto client = OpenAIChatClient::create(std::move(options));
  EXPECT_TRUE(client.ok()) << client.error().message;
  return client.ok() ? std::move(client).value() : nullptr;
}

GenerationOptions sampling(int max_tokens, float temperature, std::uint32_t seed) {
  GenerationOptions options;
  options.max_tokens = max_tokens;
  options.temperature = temperature;
  options.seed = seed;
  return options;
}

const std::vector<ChatMessage> kMessages = {{"system", "Answer briefly."}, {"user", "Name three colours."}};

// --- without a server -----------------------------------------------------------------------------

TEST(OpenAIChatClient, NamesItsServerAndModelAndRefusesAUrlThatIsNotHttp) {
  auto client = make_client({.base_url = "http://127.0.0.1:8080/v1/", .model = "qwen2.5"});
  ASSERT_TRUE(client);
  EXPECT_EQ(client->id(), "openai:http://127.0.0.1:8080/v1 qwen2.5");
  EXPECT_EQ(client->endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
  EXPECT_EQ(make_client({.base_url = "http://h/v1"})->id(), "openai:http://h/v1");
  EXPECT_EQ(make_client({.base_url = "http://h/v1", .context_tokens = 8192})->context_tokens(), 8192u);

  auto bad = OpenAIChatClient::create({.base_url = "127.0.0.1:8080/v1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(bad.error().message.find("http://"), std::string::npos) << bad.error().message;
}

TEST(OpenAIChatClient, EstimatesTokensOnTheHighSide) {
  auto client = make_client({.base_url = "http://h/v1"});
  ASSERT_TRUE(client);
  EXPECT_EQ(client->count_tokens(""), 0u);
  EXPECT_EQ(client->count_tokens("abc"), 1u);
  EXPECT_EQ(client->count_tokens(std::string(35, 'a')), 10u);
  EXPECT_EQ(client->count_tokens(std::string(36, 'a')), 11u);  // rounds up
  EXPECT_EQ(client->count_tokens("日本語"), 3u);               // one per CJK character, not 9 bytes / 3.5
}

// --- against llama.cpp's llama-server -------------------------------------------------------------

// Starts llama-server once for the suite on a free loopback port, serving a tiny chat model.
class OpenAIChatClientServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("kotae-openai-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const fs::path model = dir_ / "tiny-chat.gguf";
    ASSERT_TRUE(testing::write_tiny_llama_gguf(model, {.context = 2048, .with_tokenizer = true}));
    // The grammar keeps the random model to printable ASCII: its byte-fallback tokens would otherwise
    // form invalid UTF-8, which llama-server refuses to parse as a chat message (a 500 error event).
    server_ = new testing::LlamaServer(testing::llama_server_binary(KOTAE_LLAMA_SERVER), model,
                                       {"-c", "2048", "-t", "1", "-np", "1", "--grammar", "root ::= [ -~]*"},
                                       dir_ / "server.log");
  }

  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    fs::remove_all(dir_);
  }

  void SetUp() override {
    if (!server_ || !server_->error().empty()) GTEST_FAIL() << (server_ ? server_->error() : "no server");
  }

  static std::unique_ptr<OpenAIChatClient> client() {
    return make_client({.base_url = server_->base_url(), .context_tokens = 2048});
  }

 private:
  static inline testing::LlamaServer* server_ = nullptr;
  static inline fs::path dir_;
};

TEST_F(OpenAIChatClientServerTest, StreamsACompletionPieceByPiece) {
  auto generator = client();
  ASSERT_TRUE(generator);
  std::vector<std::string> pieces;
  auto answer = generator->generate(kMessages, sampling(16, 0.0f, 7), [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  });
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_GT(pieces.size(), 1u);
  std::string joined;
  for (const std::string& p : pieces) joined += p;
  EXPECT_EQ(joined, answer->text);
  const GenerationStats& stats = answer->stats;
  EXPECT_GT(stats.generated_tokens, 0u);
  EXPECT_LE(stats.generated_tokens, 16u);
  EXPECT_GE(stats.generated_tokens, pieces.size());  // a piece holds one token or more (split UTF-8)
  EXPECT_GT(stats.prompt_tokens, 5u);                // llama-server reports usage; ChatML alone adds more
  if (stats.generated_tokens == 16) {
    EXPECT_EQ(stats.finish_reason, "length");
  } else {
    EXPECT_EQ(stats.finish_reason, "stop");
  }
  EXPECT_GT(stats.prompt_ms, 0.0);
  EXPECT_GE(stats.generation_ms, 0.0);
}

TEST_F(OpenAIChatClientServerTest, SameSeedAndGreedySamplingGiveTheSameText) {
  auto generator = client();
  ASSERT_TRUE(generator);
  const GenerationOptions options = sampling(12, 0.0f, 11);
  auto first = generator->generate(kMessages, options);
  auto second = generator->generate(kMessages, options);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(first->text.empty());
  EXPECT_EQ(first->text, second->text);
  EXPECT_EQ(first->stats.generated_tokens, second->stats.generated_tokens);
}

TEST_F(OpenAIChatClientServerTest, ACallbackReturningFalseCancelsAndKeepsTheFirstPiece) {
  auto generator = client();
  ASSERT_TRUE(generator);
  std::vector<std::string> pieces;
  auto answer = generator->generate(kMessages, sampling(64, 1.0f, 3), [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return false;
  });
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->stats.finish_reason, "cancelled");
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(answer->text, pieces[0]);
  EXPECT_EQ(answer->stats.generated_tokens, 1u);

  // The server got over it: the next request is answered in full.
  auto next = generator->generate(kMessages, sampling(4, 0.0f, 3));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_NE(next->stats.finish_reason, "cancelled");
  EXPECT_FALSE(next->text.empty());
}

// --- failures, from scripted listeners ------------------------------------------------------------

TEST(OpenAIChatClientFailures, AServerThatIsDownIsAnIoErrorAfterTheBoundedAttempts) {
  const std::string base_url = "http://127.0.0.1:" + std::to_string(free_port()) + "/v1";
  auto generator = make_client({.base_url = base_url, .max_retries = 1, .retry_backoff_ms = 50});
  ASSERT_TRUE(generator);
  const auto start = Clock::now();
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::io);
  EXPECT_NE(answer.error().message.find(base_url + "/chat/completions"), std::string::npos) << answer.error().message;
  EXPECT_NE(answer.error().message.find("after 2 attempts"), std::string::npos) << answer.error().message;
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(OpenAIChatClientFailures, AServerThatNeverAnswersTimesOutAndIsRetried) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stop) { hold_open(fd, stop); });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(),
                                .request_timeout_ms = 300,
                                .idle_timeout_ms = 300,
                                .max_retries = 1,
                                .retry_backoff_ms = 10});
  ASSERT_TRUE(generator);
  const auto start = Clock::now();
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::io);
  EXPECT_NE(answer.error().message.find("timed out"), std::string::npos) << answer.error().message;
  EXPECT_NE(answer.error().message.find("after 2 attempts"), std::string::npos) << answer.error().message;
  EXPECT_EQ(server.connections(), 2);
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(OpenAIChatClientFailures, SilenceAfterTheFirstPieceIsAnIdleTimeoutWithoutRetry) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
    send_all(fd, kStreamHead + "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n");
    hold_open(fd, stop);
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(), .request_timeout_ms = 20000, .idle_timeout_ms = 300});
  ASSERT_TRUE(generator);
  std::vector<std::string> pieces;
  const auto start = Clock::now();
  auto answer = generator->generate(kMessages, {}, [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  });
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::io);
  EXPECT_NE(answer.error().message.find("idle timeout"), std::string::npos) << answer.error().message;
  EXPECT_EQ(pieces, std::vector<std::string>{"Hi"});
  EXPECT_EQ(server.connections(), 1);  // never retried once pieces went out
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(OpenAIChatClientFailures, ABadRequestCarriesTheServersMessageAndIsNotRetried) {
  ScriptedServer server([](int fd, const std::atomic<bool>&) {
    send_all(fd, json_answer(400, "Bad Request",
                             R"({"error":{"code":400,"message":"the request exceeds the available context size",)"
                             R"("type":"exceed_context_size_error"}})"));
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(), .retry_backoff_ms = 10});
  ASSERT_TRUE(generator);
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(answer.error().message.find("HTTP 400"), std::string::npos) << answer.error().message;
  EXPECT_NE(answer.error().message.find("the request exceeds the available context size"), std::string::npos)
      << answer.error().message;
  EXPECT_EQ(server.connections(), 1);
}

TEST(OpenAIChatClientFailures, AnOverloadedServerIsRetriedThenReportedAsOverloaded) {
  ScriptedServer server([](int fd, const std::atomic<bool>&) {
    send_all(fd, json_answer(503, "Service Unavailable",
                             R"({"error":{"code":503,"message":"Loading model","type":"unavailable_error"}})"));
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(), .max_retries = 2, .retry_backoff_ms = 10});
  ASSERT_TRUE(generator);
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::overloaded);
  EXPECT_NE(answer.error().message.find("Loading model"), std::string::npos) << answer.error().message;
  EXPECT_NE(answer.error().message.find("after 3 attempts"), std::string::npos) << answer.error().message;
  EXPECT_EQ(server.connections(), 3);
}

TEST(OpenAIChatClientFailures, RetryAfterIsHonoured) {
  ScriptedServer server([](int fd, const std::atomic<bool>&) {
    send_all(fd, json_answer(429, "Too Many Requests", R"({"error":{"message":"slow down"}})", "Retry-After: 1\r\n"));
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(), .max_retries = 1, .retry_backoff_ms = 1});
  ASSERT_TRUE(generator);
  const auto start = Clock::now();
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::overloaded);
  EXPECT_EQ(server.connections(), 2);
  EXPECT_GE(seconds_since(start), 0.9);  // waited the server's second, not our 1 ms
}

TEST(OpenAIChatClientFailures, MalformedEventDataIsCorrupt) {
  ScriptedServer server([](int fd, const std::atomic<bool>&) { send_all(fd, kStreamHead + "data: {not json\n\n"); });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url()});
  ASSERT_TRUE(generator);
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::corrupt);
  EXPECT_NE(answer.error().message.find("{not json"), std::string::npos) << answer.error().message;
  EXPECT_EQ(server.connections(), 1);
}

// Events cut at awkward places (inside the JSON, between CR and LF), CRLF and LF mixed, comments and
// other fields: the pieces still come out whole. Also pins down the request the client sends.
TEST(OpenAIChatClientFailures, EventsSplitAcrossReadsAreReassembled) {
  ScriptedServer server([](int fd, const std::atomic<bool>&) {
    const std::vector<std::string> fragments = {
        kStreamHead + ": keep-alive\r\n\r\n",
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hel",
        "lo\"}}]}\r",
        "\n\r\n",
        "event: message\nid: 3\ndata: {\"choices\":[{\"delta\":{\"content\":\" w\xC3",
        "\xB6rld\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"delta\":\r",  // one event's data on two lines, joined by '\n'
        "\ndata: {\"content\":\"!\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: {\"choices\":[],",
        "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,"
        "\"prompt_tokens_details\":{\"cached_tokens\":4}}}\r\n\r\n",
        "data: [DONE]\n\n"};
    for (const std::string& fragment : fragments) {
      send_all(fd, fragment);
      std::this_thread::sleep_for(15ms);  // separate reads on the client side
    }
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(), .model = "tiny", .api_key = "secret"});
  ASSERT_TRUE(generator);
  std::vector<std::string> pieces;
  GenerationOptions options = sampling(5, 0.5f, 9);
  options.stop = {"\n\n"};
  auto answer = generator->generate(kMessages, options, [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  });
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(pieces, (std::vector<std::string>{"Hello", " w\xC3\xB6rld", "!"}));
  EXPECT_EQ(answer->text, "Hello w\xC3\xB6rld!");
  EXPECT_EQ(answer->stats.finish_reason, "length");
  EXPECT_EQ(answer->stats.prompt_tokens, 7u);
  EXPECT_EQ(answer->stats.generated_tokens, 2u);
  EXPECT_EQ(answer->stats.reused_prompt_tokens, 4u);

  const std::string request = server.last_request();
  EXPECT_TRUE(request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n")) << request;
  EXPECT_NE(request.find("Authorization: Bearer secret\r\n"), std::string::npos) << request;
  const auto body = nlohmann::json::parse(request.substr(request.find("\r\n\r\n") + 4), nullptr, false);
  ASSERT_TRUE(body.is_object()) << request;
  EXPECT_EQ(body.value("model", ""), "tiny");
  EXPECT_EQ(body.value("stream", false), true);
  EXPECT_EQ(body["stream_options"].value("include_usage", false), true);
  EXPECT_EQ(body.value("max_tokens", 0), 5);
  EXPECT_EQ(body.value("seed", 0), 9);
  EXPECT_EQ(body["stop"], nlohmann::json::array({"\n\n"}));
  EXPECT_EQ(body.value("temperature", 0.0), 0.5);
  EXPECT_EQ(body.value("top_p", 0.0), 0.95);  // not 0.949999988079071, the float's exact value
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["content"], "Name three colours.");
}

TEST(OpenAIChatClientFailures, AnErrorEventMidStreamIsAModelError) {
  ScriptedServer server([](int fd, const std::atomic<bool>&) {
    send_all(fd, kStreamHead + "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
                     "data: {\"error\":{\"code\":500,\"message\":\"failed to decode the batch\"}}\n\n");
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url()});
  ASSERT_TRUE(generator);
  auto answer = generator->generate(kMessages, {});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::model);
  EXPECT_NE(answer.error().message.find("failed to decode the batch"), std::string::npos) << answer.error().message;
}

// An answer that leaves the connection open (Content-Length, no "Connection: close").
std::string kept_alive_answer(const std::string& text) {
  const std::string body =
      "data: {\"choices\":[{\"delta\":{\"content\":\"" + text +
      "\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n";
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

TEST(OpenAIChatClientConnections, AnswersOneAfterAnotherTravelOnOneKeptAliveConnection) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
    for (int answered = 0; !stop; ++answered) {  // every request on this connection, until the client hangs up
      if (answered > 0 && read_request(fd).empty()) return;
      if (!send_all(fd, kept_alive_answer("answer " + std::to_string(answered)))) return;
    }
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url()});
  ASSERT_TRUE(generator);
  for (int i = 0; i < 3; ++i) {
    auto answer = generator->generate(kMessages, {});
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(answer->text, "answer " + std::to_string(i));
  }
  EXPECT_EQ(server.connections(), 1);
}

TEST(OpenAIChatClientConnections, ARequestNobodyWantsAnyMoreIsGivenUpAndItsConnectionClosed) {
  std::atomic<bool> hung_up = false;
  ScriptedServer server([&](int fd, const std::atomic<bool>& stop) {
    const std::string piece = "data: {\"choices\":[{\"delta\":{\"content\":\"slow\"},\"finish_reason\":null}]}\n\n";
    if (!send_all(fd, kStreamHead) || !send_all(fd, piece)) return;
    hold_open(fd, stop);  // returns when the client hangs up
    hung_up = !stop;
  });
  ASSERT_TRUE(server.ok());
  auto generator = make_client({.base_url = server.base_url(), .idle_timeout_ms = 20000});
  ASSERT_TRUE(generator);
  std::atomic<bool> client_here = true;
  GenerationOptions options;
  options.wanted = [&] { return client_here.load(); };
  std::thread leaves([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    client_here = false;  // the server's client goes away
  });
  const auto start = Clock::now();
  auto answer = generator->generate(kMessages, options);
  leaves.join();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->stats.finish_reason, "cancelled");
  EXPECT_EQ(answer->text, "slow");
  EXPECT_LT(seconds_since(start), 5.0);  // not the 20 s idle timeout
  for (int i = 0; i < 100 && !hung_up; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(hung_up) << "the upstream connection is closed, so the upstream server stops";
}

}  // namespace
}  // namespace kotae
