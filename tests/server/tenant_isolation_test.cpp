// Tenants learn nothing about each other from a real `kotae serve` with API keys and a local GGUF
// generator: the KV prefix one tenant's question left is never reused for another's (nor reported),
// a non-admin key sees no filesystem path or upstream URL, and one tenant's conversations and finished
// jobs never push out another's.

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "support/command_runner.h"
#include "support/http_client.h"
#include "support/kotae_server_process.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class TenantIsolationTest : public ::testing::Test {
 protected:
  // A failure while preparing fails every test (an ASSERT in SetUpTestSuite would only skip them).
  static void SetUpTestSuite() { setup_error_ = new std::string(prepare()); }
  void SetUp() override {
    if (!setup_error_->empty()) FAIL() << *setup_error_;
  }
  static std::string prepare() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kotae-tenant-isolation-" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    json keys{{"keys", json::array({{{"name", "a"}, {"tenant", "alpha"}, {"sha256", sha256_hex("key-a")}},
                                    {{"name", "b"}, {"tenant", "beta"}, {"sha256", sha256_hex("key-b")}},
                                    {{"name", "ops"}, {"admin", true}, {"sha256", sha256_hex("key-admin")}}})}};
    std::ofstream(*dir_ / "keys.json") << keys.dump();
    const auto data = *dir_ / "data";
    if (!link_installed_model(kDefaultEmbeddingModel, models_dir(data))) return "cannot link the default embedder";
    if (!write_tiny_llama_gguf(*dir_ / "tiny-chat.gguf", {.context = 4096, .with_tokenizer = true}))
      return "no tiny GGUF";
    const auto added = run_command(std::string(KOTAE_BINARY) + " model add " + (*dir_ / "tiny-chat.gguf").string() +
                                       " --name tiny-chat --data " + data.string(),
                                   *dir_ / "add.err");
    if (added.exit_code != 0) return "kotae model add: " + added.err;
    server_ = new KotaeServerProcess(KOTAE_BINARY,
                                     {"--data",
                                      data.string(),
                                      "--api-keys",
                                      (*dir_ / "keys.json").string(),
                                      "--model",
                                      "tiny-chat",
                                      "--context",
                                      "4096",
                                      "--threads",
                                      "1",
                                      "--openai-url",
                                      "http://127.0.0.1:9/v1",
                                      "--backend",
                                      "llama",
                                      "--backend",
                                      "openai",
                                      "--backend",
                                      "extractive",
                                      "--conversations-per-tenant",
                                      "3",
                                      "--finished-jobs-per-tenant",
                                      "2"},
                                     *dir_ / "server.log");
    if (!server_->error().empty()) return server_->error();
    for (const char* key : {"key-a", "key-b"}) {
      if (call("POST", "/v1/collections", key, {{"name", "docs"}}).status != 201) return "cannot create a collection";
      const auto state =
          job_state(key, upload(key, "notes.md", "The lighthouse keeper writes the weather in a blue notebook.\n"));
      if (state != "succeeded") return "the upload's job ended " + state;
    }
    return "";
  }
  static void TearDownTestSuite() {
    delete setup_error_;
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  static HttpReply call(const std::string& method, const std::string& path, const std::string& key,
                        const json& body = nullptr) {
    std::vector<std::string> headers = {"Content-Type: application/json"};
    if (!key.empty()) headers.push_back("Authorization: Bearer " + key);
    return http_request(method, server_->url(path), body.is_null() ? "" : body.dump(), headers, 120);
  }
  static std::string upload(const std::string& key, const std::string& name, const std::string& text) {
    const std::string form = "--tb\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" + name +
                             "\"\r\nContent-Type: text/markdown\r\n\r\n" + text + "\r\n--tb--\r\n";
    auto reply = http_request("POST", server_->url("/v1/collections/docs/documents"), form,
                              {"Content-Type: multipart/form-data; boundary=tb", "Authorization: Bearer " + key});
    return reply.status == 202 ? json::parse(reply.body)["id"].get<std::string>() : "";
  }
  static std::string job_state(const std::string& key, const std::string& job) {
    for (int i = 0; i < 1200 && !job.empty(); ++i) {
      auto reply = call("GET", "/v1/jobs/" + job, key);
      if (reply.status == 200 && json::parse(reply.body)["finished_at"].is_number())
        return json::parse(reply.body)["state"];
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "unfinished";
  }
  static json ask(const std::string& key, const std::string& conversation = "") {
    json body{{"collection", "docs"},
              {"question", "Where does the keeper write the weather?"},
              {"backends", {"llama"}},
              {"max_tokens", 4},
              {"seed", 1},
              {"cache", false}};
    if (!conversation.empty()) body["conversation_id"] = conversation;
    auto reply = call("POST", "/v1/ask", key, body);
    EXPECT_EQ(reply.status, 200) << reply.body;
    return reply.status == 200 ? json::parse(reply.body) : json::object();
  }

  static inline std::string* setup_error_ = nullptr;
  static inline fs::path* dir_ = nullptr;
  static inline KotaeServerProcess* server_ = nullptr;
};

TEST_F(TenantIsolationTest, TheGeneratorsKvCacheIsReusedOnlyWithinATenant) {
  const auto first = ask("key-a");
  ASSERT_EQ(first["backend"], "llama.cpp") << first.dump();
  const auto follow_up = ask("key-a", first["conversation_id"]);
  EXPECT_GT(follow_up["generation"]["reused_prompt_tokens"].get<int>(), 0)
      << "a follow-up reuses its conversation's prefix";
  // The same question over the same text from another tenant: the prompt matches alpha's token for token.
  const auto other_tenant = ask("key-b");
  EXPECT_EQ(other_tenant["generation"]["reused_prompt_tokens"], 0) << other_tenant["generation"].dump();
  // ...while alpha's next conversation starts from alpha's own (its slot kept while beta's question ran
  // in another): the same instructions and sources.
  const auto new_conversation = ask("key-a");
  EXPECT_GT(new_conversation["generation"]["reused_prompt_tokens"].get<int>(), 0)
      << new_conversation["generation"].dump();
}

TEST_F(TenantIsolationTest, ATenantSeesNoPathsOrUpstreamUrls) {
  const std::string data = (*dir_ / "data").string();
  for (const std::string key : {"", "key-a"}) {
    for (const char* path : {"/readyz", "/v1/models"}) {
      auto reply = call("GET", path, key);
      if (key.empty() && std::string(path) == "/v1/models") {
        EXPECT_EQ(reply.status, 401);
        continue;
      }
      ASSERT_EQ(reply.status, 200) << path;
      EXPECT_EQ(reply.body.find("127.0.0.1:9"), std::string::npos) << path << " as '" << key << "': " << reply.body;
      EXPECT_EQ(reply.body.find(data), std::string::npos) << path << " as '" << key << "': " << reply.body;
    }
  }
  auto as_admin = call("GET", "/v1/models", "key-admin");
  EXPECT_NE(as_admin.body.find("127.0.0.1:9"), std::string::npos) << "the admin sees where the upstream is";
}

TEST_F(TenantIsolationTest, ConversationsAndFinishedJobsAreBoundedPerTenant) {
  const std::string kept = ask("key-a")["conversation_id"];
  for (int i = 0; i < 5; ++i) ask("key-b");  // beta's conversations, more than three
  const auto follow_up = call("POST", "/v1/ask", "key-a",
                              {{"collection", "docs"},
                               {"question", "And in what colour?"},
                               {"backends", {"extractive"}},
                               {"conversation_id", kept}});
  EXPECT_EQ(follow_up.status, 200) << "another tenant's conversations pushed alpha's out: " << follow_up.body;

  const std::string alpha_job = upload("key-a", "more.md", "Fog horns sound every thirty seconds.\n");
  ASSERT_EQ(job_state("key-a", alpha_job), "succeeded");
  std::vector<std::string> beta_jobs;
  for (int i = 0; i < 3; ++i) {
    beta_jobs.push_back(upload("key-b", "b" + std::to_string(i) + ".md", "Beacon " + std::to_string(i) + " shines.\n"));
    ASSERT_EQ(job_state("key-b", beta_jobs.back()), "succeeded");
  }
  EXPECT_EQ(call("GET", "/v1/jobs/" + alpha_job, "key-a").status, 200) << "another tenant's jobs pushed alpha's out";
  EXPECT_EQ(call("GET", "/v1/jobs/" + beta_jobs.front(), "key-b").status, 404) << "beta keeps its two newest";
  EXPECT_EQ(call("GET", "/v1/jobs/" + beta_jobs.back(), "key-b").status, 200);
}

TEST_F(TenantIsolationTest, TurnsPerConversationAreCapped) {
  json body{
      {"collection", "docs"}, {"question", "Where is the notebook?"}, {"backends", {"extractive"}}, {"cache", false}};
  auto first = call("POST", "/v1/ask", "key-b", body);
  ASSERT_EQ(first.status, 200);
  body["conversation_id"] = json::parse(first.body)["conversation_id"];
  int status = 200, turns = 1;
  for (; turns < 80 && status == 200; ++turns) status = call("POST", "/v1/ask", "key-b", body).status;
  EXPECT_EQ(status, 400);
  EXPECT_EQ(turns, 65) << "the 65th question in one conversation is refused";
}

}  // namespace
}  // namespace kotae::testing
