// Faults the server must survive, each caused for real: a remote generator killed while it streams an
// answer, a generator model that fails to load, a vector index file deleted or damaged between runs.
// (Disk full is tests/server/disk_full_test.sh; a process killed during ingestion is
// tests/search/crash_safety_test.cpp.)

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "support/http_client.h"
#include "support/kotae_server_process.h"
#include "support/llama_server.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

HttpReply post(const KotaeServerProcess& server, const std::string& path, const json& body) {
  return http_request("POST", server.url(path), body.dump());
}

// A data folder of its own: the installed models (linked, like the server fixture's) and nothing else.
fs::path data_with_models(const fs::path& dir) {
  const fs::path data = dir / "data";
  fs::create_directories(data);
  fs::create_directory_symlink(models_dir(default_data_dir()), data / "models");
  return data;
}

// The server keeps serving: alive, ready, and an extractive answer from the fixture's collection.
void expect_still_serving(const KotaeServerProcess& server) {
  EXPECT_EQ(http_request("GET", server.url("/healthz")).status, 200);
  EXPECT_EQ(http_request("GET", server.url("/readyz")).status, 200);
  auto answer = post(server, "/v1/ask",
                     {{"collection", "faq"},
                      {"question", "What is a Debian package?"},
                      {"backends", {"extractive"}},
                      {"cache", false}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(json::parse(answer.body)["backend"], "extractive");
}

// A real llama-server with a random-weight model that never stops on its own (--ignore-eos), so it is
// certainly still streaming when the test kills it.
class RemoteGeneratorDown : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_temp_dir("kotae-fault-remote");
    const fs::path model = dir_ / "tiny-chat.gguf";
    ASSERT_TRUE(write_tiny_llama_gguf(
        model, {.embedding = 256, .layers = 4, .feed_forward = 512, .context = 4096, .with_tokenizer = true}));
    llama_ = std::make_unique<LlamaServer>(
        llama_server_binary(KOTAE_LLAMA_SERVER), model,
        std::vector<std::string>{"-c", "4096", "-t", "1", "-np", "1", "--ignore-eos", "--grammar", "root ::= [ -~]*"},
        dir_ / "llama-server.log");
    ASSERT_EQ(llama_->error(), "");
    server_ = std::make_unique<KotaeServerProcess>(
        KOTAE_BINARY,
        std::vector<std::string>{"--data", KOTAE_SERVER_DATA, "--openai-url", llama_->base_url(), "--context", "4096"},
        dir_ / "server.log");
    ASSERT_EQ(server_->error(), "");
  }
  void TearDown() override {
    server_.reset();
    llama_.reset();
    fs::remove_all(dir_);
  }

  // Asks with streaming and kills llama-server as soon as the first token has reached the client.
  std::vector<std::pair<std::string, std::string>> ask_and_kill_mid_stream(const json& backends) {
    bool killed = false;
    json request{{"collection", "faq"},  {"question", "What is a Debian package?"},
                 {"stream", true},       {"max_tokens", 3000},
                 {"backends", backends}, {"cache", false}};
    auto reply = http_request_watching("POST", server_->url("/v1/ask"), request.dump(), [&](const std::string& so_far) {
      if (!killed && so_far.find("event: token") != std::string::npos) {
        llama_->kill_now();
        killed = true;
      }
    });
    EXPECT_TRUE(killed) << "no token arrived before the stream ended: " << reply.body;
    EXPECT_EQ(reply.status, 200) << reply.error;
    return parse_events(reply.body);
  }

  fs::path dir_;
  std::unique_ptr<LlamaServer> llama_;
  std::unique_ptr<KotaeServerProcess> server_;
};

TEST_F(RemoteGeneratorDown, MidStreamTheClientGetsAnErrorEventAndTheServerGoesOn) {
  const auto events = ask_and_kill_mid_stream({"openai"});
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().first, "sources");
  EXPECT_EQ(events[1].first, "token");
  EXPECT_EQ(events.back().first, "error");  // the last event, and the stream ended cleanly after it
  const auto error = json::parse(events.back().second)["error"];
  EXPECT_FALSE(error["code"].get<std::string>().empty());
  EXPECT_NE(error["message"].get<std::string>().find("openai"), std::string::npos) << error.dump();
  for (const auto& [name, data] : events) EXPECT_NE(name, "done");
  expect_still_serving(*server_);
}

TEST_F(RemoteGeneratorDown, MidStreamTheNextBackEndAnswersAfterARestartEvent) {
  const auto events = ask_and_kill_mid_stream({"openai", "extractive"});
  ASSERT_GE(events.size(), 4u);
  std::vector<std::string> names;
  for (const auto& e : events) names.push_back(e.first);
  EXPECT_NE(std::find(names.begin(), names.end(), "restart"), names.end());
  ASSERT_EQ(events.back().first, "done");
  const auto done = json::parse(events.back().second);
  EXPECT_EQ(done["backend"], "extractive");
  ASSERT_EQ(done["fallbacks"].size(), 1u) << done.dump();
  EXPECT_EQ(done["fallbacks"][0]["backend"], "openai");
  expect_still_serving(*server_);
  // With the remote server gone for good, a new question goes straight to the next back-end.
  auto later = post(*server_, "/v1/ask",
                    {{"collection", "faq"}, {"question", "How do I keep my system up to date?"}, {"cache", false}});
  ASSERT_EQ(later.status, 200) << later.body;
  EXPECT_EQ(json::parse(later.body)["backend"], "extractive");
}

TEST(Faults, AGeneratorThatFailsToLoadIsReportedByReadyzAndTheNextBackEndAnswers) {
  const auto dir = fresh_temp_dir("kotae-fault-model");
  // A GGUF that is not a model: the way a file from a newer, incompatible llama.cpp would fail.
  const fs::path broken = dir / "broken.gguf";
  {
    std::ofstream out(broken, std::ios::binary);
    out << "GGUF";
    std::mt19937 noise(3);
    for (int i = 0; i < 4096; ++i) out.put(static_cast<char>(noise()));
  }
  // Installed like any model (its own data folder: the embedder hard-linked, the fixture's collections
  // copied), so it passes the integrity check and fails in llama.cpp itself.
  const fs::path data = dir / "data";
  ASSERT_TRUE(link_installed_model(kDefaultEmbeddingModel, data / "models"));
  fs::copy(fs::path(KOTAE_SERVER_DATA) / "collections", data / "collections", fs::copy_options::recursive);
  const std::string add = std::string(KOTAE_BINARY) + " model add " + broken.string() +
                          " --name broken-generator --data " + data.string() + " > /dev/null";
  ASSERT_EQ(std::system(add.c_str()), 0);
  KotaeServerProcess server(KOTAE_BINARY, {"--data", data.string(), "--model", "broken-generator"}, dir / "server.log");
  ASSERT_EQ(server.error(), "") << server.log();
  auto ready = http_request("GET", server.url("/readyz"));
  ASSERT_EQ(ready.status, 200) << ready.body;
  const auto readiness = json::parse(ready.body);
  EXPECT_EQ(readiness["answers_with"], "extractive") << readiness.dump();
  ASSERT_EQ(readiness["backends"].size(), 2u) << readiness.dump();
  EXPECT_EQ(readiness["backends"][0]["name"], "llama.cpp");
  EXPECT_EQ(readiness["backends"][0]["available"], false);
  const auto reason = readiness["backends"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("broken-generator"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("refused"), std::string::npos) << "the integrity check passed; llama.cpp failed: " << reason;
  EXPECT_EQ(readiness["backends"][1]["available"], true);

  auto answer =
      post(server, "/v1/ask", {{"collection", "faq"}, {"question", "What is a Debian package?"}, {"cache", false}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const auto body = json::parse(answer.body);
  EXPECT_EQ(body["backend"], "extractive");
  ASSERT_EQ(body["fallbacks"].size(), 1u);
  EXPECT_EQ(body["fallbacks"][0]["backend"], "llama.cpp");
  fs::remove_all(dir);
}

TEST(Faults, ADeletedOrDamagedVectorIndexIsRebuiltAtStartWithALogLine) {
  const auto dir = fresh_temp_dir("kotae-fault-index");
  const fs::path data = data_with_models(dir);
  const std::string faq = "/usr/share/doc/debian/FAQ/";
  const std::string index_command = std::string(KOTAE_BINARY) + " index " + faq + "pkg-basics.en.html " + faq +
                                    "basic-defs.en.html --collection docs --data " + data.string() + " > /dev/null";
  ASSERT_EQ(std::system(index_command.c_str()), 0);
  const fs::path index = data / "collections" / "docs" / "vectors.index";
  ASSERT_TRUE(fs::exists(index));
  const auto size = fs::file_size(index);

  auto start_and_search = [&](const std::string& what, const std::string& reason_part) {
    const fs::path log = dir / (what + ".log");
    {
      KotaeServerProcess server(KOTAE_BINARY, {"--data", data.string()}, log);
      ASSERT_EQ(server.error(), "") << what;
      auto found = post(server, "/v1/search",
                        {{"collection", "docs"}, {"query", "what is a virtual package"}, {"mode", "vector"}});
      ASSERT_EQ(found.status, 200) << what << ": " << found.body;
      EXPECT_GE(json::parse(found.body)["hits"].size(), 3u) << what;
    }
    std::ifstream in(log);
    std::string line, rebuilt;
    while (std::getline(in, line)) {
      if (line.find("\"vector_index_rebuilt\"") != std::string::npos) rebuilt = line;
    }
    ASSERT_FALSE(rebuilt.empty()) << what << ": no vector_index_rebuilt log line";
    const auto event = json::parse(rebuilt);
    EXPECT_EQ(event["collection"], "docs");
    EXPECT_GT(event["chunks"].get<int>(), 10);
    EXPECT_NE(event["reason"].get<std::string>().find(reason_part), std::string::npos) << what << ": " << rebuilt;
    EXPECT_TRUE(fs::exists(index)) << what << ": the rebuilt index is saved";
  };

  fs::remove(index);
  start_and_search("deleted", "missing");
  {
    std::ofstream garbage(index, std::ios::binary | std::ios::trunc);
    std::mt19937 noise(5);
    for (std::uintmax_t i = 0; i < size; ++i) garbage.put(static_cast<char>(noise()));
  }
  start_and_search("garbage", "damaged");
  fs::resize_file(index, fs::file_size(index) / 2);
  start_and_search("truncated", "damaged");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kotae::testing
