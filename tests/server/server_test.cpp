// The real `kotae serve` on a loopback port, spoken to over HTTP: the API's answers, its errors, its
// streams, its limits and its shutdown. The "faq" collection (three Debian FAQ chapters) is indexed by
// the CLI in a fixture; tests that change collections use names of their own.

#include <gtest/gtest.h>
#include <leptonica/allheaders.h>
#include <poppler-document.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>
#include <signal.h>

#include <algorithm>

#include <cmath>
#include <fstream>
#include <iterator>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "model/sentence_encoder.h"
#include "platform/gpu_devices.h"
#include "support/command_runner.h"
#include "support/http_client.h"
#include "support/kotae_server_process.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Each case's server has a data folder of its own (the fixture's collections copied, its models linked):
// cases run at once, and a server starting on a folder another uses would open the other's collections
// and discard its uploads in flight as never acknowledged.
class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_temp_dir("kotae-server");
    const fs::path data = dir_ / "data";
    fs::create_directories(data);
    fs::copy(fs::path(KOTAE_SERVER_DATA) / "collections", data / "collections", fs::copy_options::recursive);
    fs::create_symlink(fs::canonical(fs::path(KOTAE_SERVER_DATA) / "models"), data / "models");
    server_ = std::make_unique<KotaeServerProcess>(
        KOTAE_BINARY, std::vector<std::string>{"--data", data.string(), "--max-body-bytes", "200000"},
        dir_ / "server.log");
    ASSERT_EQ(server_->error(), "");
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }

  HttpReply get(const std::string& path) { return http_request("GET", server_->url(path)); }
  HttpReply post(const std::string& path, const json& body) {
    return http_request("POST", server_->url(path), body.dump());
  }
  static json body_of(const HttpReply& r) { return json::parse(r.body); }
  static std::string error_code(const HttpReply& r) { return json::parse(r.body)["error"]["code"]; }

  fs::path dir_;
  std::unique_ptr<KotaeServerProcess> server_;
};

TEST_F(ServerTest, HealthReadinessAndTheOpenApiDocument) {
  auto health = get("/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(body_of(health)["status"], "ok");
  auto ready = get("/readyz");
  ASSERT_EQ(ready.status, 200);
  EXPECT_EQ(body_of(ready)["embedders"][0]["model"], "all-minilm-l6-v2");
  auto spec = get("/openapi.json");
  ASSERT_EQ(spec.status, 200);
  EXPECT_EQ(body_of(spec)["openapi"].get<std::string>().substr(0, 2), "3.");
}

TEST_F(ServerTest, TheWebPageIsServedFromTheBinaryWithItsPolicyAndRevalidation) {
  auto page = get("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_NE(page.body.find(R"(<script type="module" src="/assets/app.js">)"), std::string::npos);
  EXPECT_NE(page.headers["content-security-policy"].find("script-src 'self'"), std::string::npos);
  const std::string etag = page.headers["etag"];
  ASSERT_FALSE(etag.empty());
  auto again = http_request("GET", server_->url("/"), "", {"If-None-Match: " + etag});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  auto script = http_request("GET", server_->url("/assets/app.js"), "", {"Accept-Encoding: gzip, br"});
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.headers["content-encoding"], "gzip");
  ASSERT_GE(script.body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(script.body[0]), 0x1f);  // the gzip magic number
  EXPECT_EQ(get("/assets/missing.js").status, 404);
}

TEST_F(ServerTest, ErrorsAreJsonWithAStableCode) {
  auto missing = get("/v1/nothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(error_code(missing), "not_found");
  auto wrong_method = http_request("PUT", server_->url("/v1/search"), "{}");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(wrong_method.headers["allow"], "POST");
  auto not_json = http_request("POST", server_->url("/v1/search"), "{not json");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_EQ(error_code(not_json), "invalid_request");
  auto no_query = post("/v1/search", {{"collection", "faq"}});
  EXPECT_EQ(no_query.status, 400);
  EXPECT_NE(body_of(no_query)["error"]["message"].get<std::string>().find("'query'"), std::string::npos);
  auto bad_mode = post("/v1/search", {{"collection", "faq"}, {"query", "apt"}, {"mode", "psychic"}});
  EXPECT_EQ(bad_mode.status, 400);
  auto no_collection = post("/v1/search", {{"collection", "nope"}, {"query", "apt"}});
  EXPECT_EQ(no_collection.status, 404);
  EXPECT_EQ(error_code(no_collection), "not_found");
}

TEST_F(ServerTest, BodiesOverTheLimitAre413AndTheServerGoesOn) {
  const std::string big(300000, 'a');
  auto reply = post("/v1/search", {{"collection", "faq"}, {"query", big}});
  EXPECT_EQ(reply.status, 413);
  EXPECT_EQ(error_code(reply), "payload_too_large");
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(ServerTest, CollectionsAreCreatedListedDescribedAndDeleted) {
  const std::string name = "made-by-test";
  auto created = post("/v1/collections", {{"name", name}, {"chunk_tokens", 128}, {"overlap_tokens", 16}});
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(body_of(created)["documents"], 0);
  EXPECT_EQ(body_of(created)["chunk_tokens"], 128);
  EXPECT_EQ(post("/v1/collections", {{"name", name}}).status, 409);
  EXPECT_EQ(post("/v1/collections", {{"name", "../escape"}}).status, 400);

  auto list = body_of(get("/v1/collections"));
  std::vector<std::string> names;
  for (const auto& c : list["data"]) names.push_back(c["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "faq"), names.end());

  auto faq = body_of(get("/v1/collections/faq"));
  EXPECT_EQ(faq["documents"], 3);
  EXPECT_GT(faq["chunks"].get<int>(), 10);
  EXPECT_EQ(faq["embedder"], "all-minilm-l6-v2");
  EXPECT_GT(faq["size_bytes"].get<long>(), 0);
  auto documents = body_of(get("/v1/collections/faq/documents"));
  EXPECT_EQ(documents["data"].size(), 3u);

  EXPECT_EQ(http_request("DELETE", server_->url("/v1/collections/" + name)).status, 200);
  EXPECT_EQ(get("/v1/collections/" + name).status, 404);
  EXPECT_EQ(http_request("DELETE", server_->url("/v1/collections/" + name)).status, 404);
}

TEST_F(ServerTest, SearchFindsTheChapterThatAnswers) {
  auto reply = post("/v1/search", {{"collection", "faq"}, {"query", "What is a virtual package?"}, {"k", 3}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  auto hits = body_of(reply)["hits"];
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_NE(hits[0]["document"].get<std::string>().find("pkg-basics"), std::string::npos);
  EXPECT_NE(hits[0]["text"].get<std::string>().find("virtual"), std::string::npos);
  auto bm25 = body_of(post("/v1/search", {{"collection", "faq"}, {"query", "dpkg"}, {"mode", "bm25"}, {"k", 2}}));
  EXPECT_EQ(bm25["mode"], "bm25");
  EXPECT_EQ(bm25["hits"].size(), 2u);
}

TEST_F(ServerTest, AskAnswersWithCitationsAndKeepsTheConversation) {
  auto reply = post("/v1/ask", {{"collection", "faq"}, {"question", "What is a virtual package?"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  auto answer = body_of(reply);
  EXPECT_EQ(answer["backend"], "extractive");
  EXPECT_NE(answer["answer"].get<std::string>().find("virtual package"), std::string::npos);
  ASSERT_FALSE(answer["citations"].empty());
  const auto& citation = answer["citations"][0];
  EXPECT_NE(citation["document"].get<std::string>().find("pkg-basics"), std::string::npos);
  EXPECT_LT(citation["start"].get<long>(), citation["end"].get<long>());
  EXPECT_GT(answer["timings_ms"]["total"].get<double>(), 0);
  const std::string conversation = answer["conversation_id"];

  auto follow_up = post("/v1/ask", {{"collection", "faq"},
                                    {"question", "Which packages provide a mail transport agent?"},
                                    {"conversation_id", conversation}});
  ASSERT_EQ(follow_up.status, 200) << follow_up.body;
  EXPECT_EQ(body_of(follow_up)["conversation_id"], conversation);
  auto unknown = post("/v1/ask", {{"collection", "faq"}, {"question", "Why?"}, {"conversation_id", "conv_nope"}});
  EXPECT_EQ(unknown.status, 404);

  auto uncovered =
      body_of(post("/v1/ask", {{"collection", "faq"}, {"question", "What is the boiling point of lead?"}}));
  EXPECT_EQ(uncovered["covered"], false);
  EXPECT_EQ(uncovered["backend"], "none");
}

TEST_F(ServerTest, AskStreamsServerSentEventsInOrder) {
  auto reply = post("/v1/ask", {{"collection", "faq"}, {"question", "What is a virtual package?"}, {"stream", true}});
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.headers["content-type"], "text/event-stream");
  const auto events = parse_events(reply.body);
  std::vector<std::string> names;
  for (const auto& [name, data] : events) {
    if (names.empty() || names.back() != name) names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"sources", "token", "citations", "timings", "done"}));
  std::string streamed;
  for (const auto& [name, data] : events) {
    if (name == "token") streamed += json::parse(data)["text"].get<std::string>();
  }
  EXPECT_EQ(streamed, json::parse(events.back().second)["answer"]);
}

TEST_F(ServerTest, EmbeddingsMatchTheModelRunDirectly) {
  auto reply = post("/v1/embeddings", {{"input", {"How do I install a package?", "Debian"}}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  auto body = body_of(reply);
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][1]["index"], 1);
  EXPECT_GT(body["usage"]["prompt_tokens"].get<int>(), 4);
  // The server runs the model at the precision this CPU gets by default (static INT8 with VNNI).
  const auto ready = body_of(get("/readyz"));
  EncoderOptions options;
  if (ready["embedders"][0]["precision"] == "int8") options.precision = EncoderOptions::Precision::int8;
  auto encoder = SentenceEncoder::load(model_dir("all-minilm-l6-v2"), options);
  ASSERT_TRUE(encoder) << encoder.error().message;
  const std::string texts[] = {"How do I install a package?"};
  auto direct = (*encoder)->embed(texts, TextRole::passage);
  ASSERT_TRUE(direct);
  const auto served = body["data"][0]["embedding"].get<std::vector<float>>();
  ASSERT_EQ(served.size(), 384u);
  for (std::size_t i = 0; i < served.size(); ++i) EXPECT_NEAR(served[i], direct->row(0)[i], 1e-5);

  auto base64 = body_of(post("/v1/embeddings", {{"input", "Debian"}, {"encoding_format", "base64"}}));
  EXPECT_EQ(base64["data"][0]["embedding"].get<std::string>().size(), 4 * ((384 * 4 + 2) / 3));
  EXPECT_EQ(post("/v1/embeddings", {{"input", "x"}, {"model", "no-such-model"}}).status, 404);
  EXPECT_EQ(post("/v1/embeddings", {{"input", {1, 2, 3}}}).status, 400);
}

TEST_F(ServerTest, EmbeddingsMarkQueriesForModelsThatWantIt) {
  const std::string model = "e5-small-v2-int8";  // reads "query: " and "passage: " before texts
  auto vector_of = [&](const json& request) {
    auto reply = post("/v1/embeddings", request);
    EXPECT_EQ(reply.status, 200) << reply.body;
    return body_of(reply)["data"][0]["embedding"].get<std::vector<float>>();
  };
  const auto query = vector_of({{"input", "install a package"}, {"model", model}, {"input_type", "query"}});
  const auto passage = vector_of({{"input", "install a package"}, {"model", model}});
  EXPECT_EQ(vector_of({{"input", "install a package"}, {"model", model}, {"input_type", "document"}}), passage);
  auto encoder = SentenceEncoder::load(model_dir(model));
  ASSERT_TRUE(encoder) << encoder.error().message;
  const text::Encoding marked[] = {(*encoder)->tokenize("query: install a package")};
  auto direct = (*encoder)->embed_encoded(marked);
  ASSERT_TRUE(direct);
  ASSERT_EQ(query.size(), 384u);
  double same = 0;
  for (std::size_t i = 0; i < query.size(); ++i) {
    EXPECT_NEAR(query[i], direct->row(0)[i], 1e-5);
    same += double(query[i]) * passage[i];
  }
  EXPECT_LT(same, 0.999);
  EXPECT_EQ(post("/v1/embeddings", {{"input", "x"}, {"input_type", "question"}}).status, 400);
}

TEST_F(ServerTest, ConcurrentEmbeddingRequestsAllGetTheirOwnVectors) {
  std::vector<std::thread> clients;
  std::vector<json> replies(16);
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&, i] {
      replies[i] = body_of(post("/v1/embeddings", {{"input", "sentence number " + std::to_string(i)}}));
    });
  }
  for (auto& c : clients) c.join();
  auto alone = body_of(post("/v1/embeddings", {{"input", "sentence number 7"}}));
  const auto a = replies[7]["data"][0]["embedding"].get<std::vector<float>>();
  const auto b = alone["data"][0]["embedding"].get<std::vector<float>>();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5);
  EXPECT_NE(replies[3]["data"][0]["embedding"], replies[4]["data"][0]["embedding"]);
}

TEST_F(ServerTest, RerankSpeaksLlamaCppAndTeiSchemas) {
  auto llama = post("/v1/rerank", {{"query", "How do I install software?"},
                                   {"documents", {"Bananas are yellow.", "Use apt install to add packages."}}});
  ASSERT_EQ(llama.status, 200) << llama.body;
  auto results = body_of(llama)["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["index"], 1);
  EXPECT_GT(results[0]["relevance_score"].get<double>(), results[1]["relevance_score"].get<double>());

  // TEI's body: TEI's semantics, which need a cross-encoder (this server has none), and TEI's error.
  auto tei = post("/rerank", {{"query", "How do I install software?"},
                              {"texts", {"Use apt install to add packages.", "Bananas are yellow."}},
                              {"return_text", true}});
  ASSERT_EQ(tei.status, 424) << tei.body;
  EXPECT_EQ(body_of(tei)["error_type"], "Backend");
}

TEST_F(ServerTest, ChatCompletionsAreGroundedOnANamedCollection) {
  json request{{"model", "kotae"},
               {"collection", "faq"},
               {"messages", {{{"role", "user"}, {"content", "What is a virtual package?"}}}}};
  auto reply = post("/v1/chat/completions", request);
  ASSERT_EQ(reply.status, 200) << reply.body;
  auto body = body_of(reply);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_NE(body["choices"][0]["message"]["content"].get<std::string>().find("virtual package"), std::string::npos);
  EXPECT_FALSE(body["choices"][0]["message"]["citations"].empty());
  EXPECT_EQ(body["kotae"]["backend"], "extractive");

  request["stream"] = true;
  auto streamed = post("/v1/chat/completions", request);
  const auto events = parse_events(streamed.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back().second, "[DONE]");
  std::string content;
  for (const auto& [name, data] : events) {
    if (data == "[DONE]") continue;
    auto chunk = json::parse(data);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    content += chunk["choices"][0]["delta"].value("content", "");
  }
  EXPECT_EQ(content, body["choices"][0]["message"]["content"]);

  auto plain = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  EXPECT_EQ(plain.status, 400);
  EXPECT_EQ(error_code(plain), "no_generator");
}

// A multipart/form-data body of files (name, bytes).
std::string form(const std::vector<std::pair<std::string, std::string>>& files, const std::string& boundary) {
  std::string body;
  for (const auto& [name, bytes] : files) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" + name +
            "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + bytes + "\r\n";
  }
  return body + "--" + boundary + "--\r\n";
}

TEST_F(ServerTest, UploadsBecomeAJobWhoseFilesAreIndexedOrReportFailures) {
  ASSERT_EQ(post("/v1/collections", {{"name", "uploads-test"}}).status, 201);
  const std::string boundary = "kotae-test-boundary";
  const std::vector<std::string> headers = {"Content-Type: multipart/form-data; boundary=" + boundary};
  const std::string url = server_->url("/v1/collections/uploads-test/documents");
  auto accepted =
      http_request("POST", url,
                   form({{"notes.md", "# Engines\n\nThe flux capacitor needs 1.21 gigawatts to travel in time.\n"},
                         {"broken.pdf", "this is not a PDF"}},
                        boundary),
                   headers);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string job_url = accepted.headers["location"];
  ASSERT_EQ(job_url, "/v1/jobs/" + body_of(accepted)["id"].get<std::string>());

  json job;
  for (int i = 0; i < 600; ++i) {
    job = body_of(get(job_url));
    if (job["finished_at"].is_number()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(job["state"], "partial") << job.dump();
  EXPECT_EQ(job["files"][0]["status"], "indexed");
  EXPECT_GT(job["files"][0]["chunks"].get<int>(), 0);
  EXPECT_EQ(job["files"][1]["status"], "failed");
  EXPECT_NE(job["files"][1]["error"].get<std::string>().find("PDF"), std::string::npos);
  EXPECT_EQ(job["progress"]["files_done"], 2);

  auto answer = body_of(
      post("/v1/ask", {{"collection", "uploads-test"}, {"question", "How much power does the flux capacitor need?"}}));
  EXPECT_NE(answer["answer"].get<std::string>().find("1.21 gigawatts"), std::string::npos) << answer.dump();
  EXPECT_EQ(answer["citations"][0]["document"], "notes.md");

  auto documents = body_of(get("/v1/collections/uploads-test/documents"))["data"];
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents[0]["path"], "notes.md");
  const auto id = documents[0]["id"].get<long>();
  EXPECT_EQ(http_request("DELETE", server_->url("/v1/collections/uploads-test/documents/" + std::to_string(id))).status,
            200);
  EXPECT_EQ(body_of(get("/v1/collections/uploads-test"))["documents"], 0);
  EXPECT_EQ(http_request("DELETE", server_->url("/v1/collections/uploads-test/documents/" + std::to_string(id))).status,
            404);
  EXPECT_EQ(get("/v1/jobs/job_unknown").status, 404);
  http_request("DELETE", server_->url("/v1/collections/uploads-test"));
}

TEST_F(ServerTest, UploadNamesAndTypesAreChecked) {
  ASSERT_EQ(post("/v1/collections", {{"name", "upload-checks"}}).status, 201);
  const std::string boundary = "b0undary";
  const std::vector<std::string> headers = {"Content-Type: multipart/form-data; boundary=" + boundary};
  const std::string url = server_->url("/v1/collections/upload-checks/documents");
  auto climbing = http_request("POST", url, form({{"../../etc/evil.md", "x"}}, boundary), headers);
  EXPECT_EQ(climbing.status, 400);
  EXPECT_NE(climbing.body.find("climbs out"), std::string::npos);
  EXPECT_EQ(http_request("POST", url, form({{".hidden.md", "x"}}, boundary), headers).status, 400);
  auto program = http_request("POST", url, form({{"setup.exe", "MZ"}}, boundary), headers);
  EXPECT_EQ(program.status, 415);
  EXPECT_EQ(error_code(program), "unsupported_file_type");
  EXPECT_EQ(http_request("POST", url, "{}").status, 415);  // JSON is not an upload
  EXPECT_EQ(http_request("POST", url, "--b0undary\r\ngarbage", headers).status, 400);
  EXPECT_EQ(body_of(get("/v1/collections/upload-checks"))["documents"], 0);
  http_request("DELETE", server_->url("/v1/collections/upload-checks"));
}

TEST_F(ServerTest, AQueuedJobCanBeCancelled) {
  ASSERT_EQ(post("/v1/collections", {{"name", "cancel-test"}}).status, 201);
  const std::string boundary = "cancel-boundary";
  const std::vector<std::string> headers = {"Content-Type: multipart/form-data; boundary=" + boundary};
  const std::string url = server_->url("/v1/collections/cancel-test/documents");
  std::string chapter;
  {
    std::ifstream in("/usr/share/doc/debian/FAQ/pkg-basics.en.html");
    chapter.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The first job holds the collection's writer lock long enough for the second to wait its turn.
  auto first_upload =
      http_request("POST", url, form({{"a.html", chapter}, {"b.html", chapter + " "}}, boundary), headers);
  ASSERT_EQ(first_upload.status, 202) << first_upload.body;
  auto second_upload = http_request("POST", url, form({{"c.html", chapter + "  "}}, boundary), headers);
  ASSERT_EQ(second_upload.status, 202) << second_upload.body;
  const json first = json::parse(first_upload.body), second = json::parse(second_upload.body);
  auto cancelled = http_request("DELETE", server_->url("/v1/jobs/" + second["id"].get<std::string>()));
  EXPECT_EQ(cancelled.status, 202);
  json job;
  for (int i = 0; i < 600; ++i) {
    job = body_of(get("/v1/jobs/" + second["id"].get<std::string>()));
    if (job["finished_at"].is_number()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(job["state"], "cancelled");
  EXPECT_EQ(job["files"][0]["status"], "cancelled");
  for (int i = 0; i < 600 && !body_of(get("/v1/jobs/" + first["id"].get<std::string>()))["finished_at"].is_number();
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(body_of(get("/v1/collections/cancel-test"))["documents"], 2);
  http_request("DELETE", server_->url("/v1/collections/cancel-test"));
}

// A scanner's PDF of examples/docs' first `pages` pages: each rendered by poppler at 300 dpi, made
// black and white, and written by Leptonica as a page that is one G4 picture (no text layer).
std::string scanned_pdf(int pages) {
  std::string original;
  {
    std::ifstream in(fs::path(KOTAE_EXAMPLES_DIR) / "sqlite-when-to-use.pdf", std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::unique_ptr<poppler::document> pdf(
      poppler::document::load_from_raw_data(original.data(), static_cast<int>(original.size())));
  if (!pdf) return "";
  PIXA* scans = pixaCreate(pages);
  for (int index = 0; index < pages; ++index) {
    std::unique_ptr<poppler::page> page(pdf->create_page(index));
    poppler::page_renderer renderer;
    renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
    renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
    const poppler::image image = renderer.render_page(page.get(), 300, 300);
    PIX* gray = pixCreate(image.width(), image.height(), 8);
    l_uint32* data = pixGetData(gray);
    const int wpl = pixGetWpl(gray);
    for (int y = 0; y < image.height(); ++y) {
      const auto* row = reinterpret_cast<const unsigned char*>(image.const_data()) + y * image.bytes_per_row();
      for (int x = 0; x < image.width(); ++x) {
        const unsigned char* p = row + 4 * x;
        SET_DATA_BYTE(data + y * wpl, x, (p[2] * 299 + p[1] * 587 + p[0] * 114) / 1000);
      }
    }
    PIX* black_and_white = pixThresholdToBinary(gray, 160);
    pixSetResolution(black_and_white, 300, 300);
    pixaAddPix(scans, black_and_white, L_INSERT);
    pixDestroy(&gray);
  }
  l_uint8* bytes = nullptr;
  size_t size = 0;
  const bool made = pixaConvertToPdfData(scans, 300, 1.0, L_G4_ENCODE, 0, "scan", &bytes, &size) == 0;
  pixaDestroy(&scans);
  std::string out = made ? std::string(reinterpret_cast<const char*>(bytes), size) : "";
  lept_free(bytes);
  return out;
}

// A scan's pages are OCR'd two at a time (--ingest-threads 2), and its file in the job counts them as
// they are read: the events stream shows the count rising while the file indexes, and the job's record
// keeps the final count across a restart.
TEST_F(ServerTest, AScannedPdfShowsItsOcrPagesInTheJobAsTheyAreRead) {
  const std::vector<std::string> args = {"--data", (dir_ / "data").string(), "--ingest-threads", "2"};
  server_.reset();
  server_ = std::make_unique<KotaeServerProcess>(KOTAE_BINARY, args, dir_ / "server-ocr.log");  // a log of its own
  ASSERT_EQ(server_->error(), "");
  const std::string scan = scanned_pdf(3);
  ASSERT_FALSE(scan.empty());
  ASSERT_EQ(post("/v1/collections", {{"name", "scans"}}).status, 201);
  const std::string boundary = "scan-boundary";
  auto accepted =
      http_request("POST", server_->url("/v1/collections/scans/documents"),
                   form({{"notes.md", "# Notes\n\nNothing here needs OCR.\n"}, {"scan.pdf", scan}}, boundary),
                   {"Content-Type: multipart/form-data; boundary=" + boundary});
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = body_of(accepted)["id"];

  // The stream ends when the job does.
  auto stream = http_request("GET", server_->url("/v1/jobs/" + id + "/events"), "", {}, 240);
  ASSERT_EQ(stream.status, 200) << stream.error;
  std::vector<int> read_while_indexing;  // the scan's ocr_pages_done in each event that shows it indexing
  json last;
  for (const auto& [name, data] : parse_events(stream.body)) {
    ASSERT_EQ(name, "job");
    last = json::parse(data);
    EXPECT_FALSE(last["files"][0].contains("ocr_pages")) << "a Markdown file has nothing to OCR: " << data;
    const json& file = last["files"][1];
    if (file["status"] != "indexing" || !file.contains("ocr_pages")) continue;
    EXPECT_EQ(file["ocr_pages"], 3) << data;
    read_while_indexing.push_back(file["ocr_pages_done"].get<int>());
  }
  ASSERT_EQ(last["state"], "succeeded") << last.dump();
  EXPECT_EQ(last["files"][1]["status"], "indexed");
  EXPECT_EQ(last["files"][1]["ocr_pages"], 3);
  EXPECT_EQ(last["files"][1]["ocr_pages_done"], 3);
  EXPECT_TRUE(std::is_sorted(read_while_indexing.begin(), read_while_indexing.end()));
  EXPECT_TRUE(std::any_of(read_while_indexing.begin(), read_while_indexing.end(), [](int n) { return n > 0 && n < 3; }))
      << "no event showed the scan part-way through its pages";
  auto answer =
      body_of(post("/v1/search", {{"collection", "scans"}, {"query", "Appropriate Uses For SQLite"}, {"k", 1}}));
  EXPECT_EQ(answer["hits"][0]["document"], "scan.pdf") << answer.dump();

  // The record, read back by the next start.
  EXPECT_EQ(server_->terminate(), 0);
  server_ = std::make_unique<KotaeServerProcess>(KOTAE_BINARY, args, dir_ / "server-ocr-again.log");
  ASSERT_EQ(server_->error(), "");
  const json again = body_of(get("/v1/jobs/" + id));
  EXPECT_EQ(again["files"][1]["ocr_pages"], 3) << again.dump();
  EXPECT_EQ(again["files"][1]["ocr_pages_done"], 3);
  EXPECT_FALSE(again["files"][0].contains("ocr_pages"));
  http_request("DELETE", server_->url("/v1/collections/scans"));
}

// Uploads files and waits for the job to finish; returns its final status.
json upload_and_wait(KotaeServerProcess& server, const std::string& collection,
                     const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string boundary = "wait-boundary";
  auto accepted = http_request("POST", server.url("/v1/collections/" + collection + "/documents"),
                               form(files, boundary), {"Content-Type: multipart/form-data; boundary=" + boundary});
  if (accepted.status != 202) return json::parse(accepted.body);
  json job;
  for (int i = 0; i < 600; ++i) {
    job = json::parse(http_request("GET", server.url(accepted.headers["location"])).body);
    if (job["finished_at"].is_number()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return job;
}

TEST_F(ServerTest, ASmallUploadIsNotKeptWaitingBehindAScanBeingRead) {
  // One ingestion thread, busy with a 6-page scan: a note uploaded to another collection takes the
  // express lane (jobs up to --ingest-express-bytes) and is indexed while the scan is still read.
  const std::vector<std::string> args = {"--data", (dir_ / "data").string(), "--ingest-threads",
                                         "1",      "--ingest-express-bytes", "100000"};
  server_.reset();
  server_ = std::make_unique<KotaeServerProcess>(KOTAE_BINARY, args, dir_ / "server-express.log");
  ASSERT_EQ(server_->error(), "");
  const std::string scan = scanned_pdf(6);
  ASSERT_GT(scan.size(), 100000U);
  ASSERT_EQ(post("/v1/collections", {{"name", "scans"}}).status, 201);
  ASSERT_EQ(post("/v1/collections", {{"name", "notes"}}).status, 201);
  const std::string boundary = "express-boundary";
  auto accepted =
      http_request("POST", server_->url("/v1/collections/scans/documents"), form({{"scan.pdf", scan}}, boundary),
                   {"Content-Type: multipart/form-data; boundary=" + boundary});
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string scan_job = body_of(accepted)["id"];
  for (int i = 0; i < 100 && body_of(get("/v1/jobs/" + scan_job))["state"] != "running"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const json note = upload_and_wait(*server_, "notes", {{"note.md", "# Note\n\nThe ferry leaves at nine.\n"}});
  EXPECT_EQ(note["state"], "succeeded") << note.dump();
  const json scan_then = body_of(get("/v1/jobs/" + scan_job));
  EXPECT_EQ(scan_then["state"], "running") << "the note waited for the scan: " << scan_then.dump();
  http_request("DELETE", server_->url("/v1/collections/scans"));
  http_request("DELETE", server_->url("/v1/collections/notes"));
}

TEST_F(ServerTest, RepeatedQuestionsComeFromTheCacheUntilTheCollectionChanges) {
  ASSERT_EQ(post("/v1/collections", {{"name", "cache-test"}}).status, 201);
  ASSERT_EQ(upload_and_wait(*server_, "cache-test",
                            {{"a.md", "The flux capacitor needs 1.21 gigawatts of power.\n"}})["state"],
            "succeeded");
  const json question{{"collection", "cache-test"}, {"question", "How much power does the flux capacitor need?"}};
  auto first = post("/v1/ask", question);
  EXPECT_EQ(first.headers["x-kotae-cache"], "miss");
  auto second = post("/v1/ask", question);
  EXPECT_EQ(second.headers["x-kotae-cache"], "hit");
  EXPECT_EQ(body_of(second)["cache"], "hit");
  EXPECT_EQ(body_of(second)["answer"], body_of(first)["answer"]);
  auto bypass = post("/v1/ask", {{"collection", "cache-test"}, {"question", question["question"]}, {"cache", false}});
  EXPECT_EQ(body_of(bypass)["cache"], "off");
  auto other_settings = post("/v1/ask", {{"collection", "cache-test"}, {"question", question["question"]}, {"k", 2}});
  EXPECT_EQ(body_of(other_settings)["cache"], "miss");

  ASSERT_EQ(upload_and_wait(*server_, "cache-test", {{"b.md", "The DeLorean reaches 88 miles per hour.\n"}})["state"],
            "succeeded");
  auto after_change = post("/v1/ask", question);
  EXPECT_EQ(after_change.headers["x-kotae-cache"], "miss");

  const auto metrics = get("/metrics").body;
  EXPECT_NE(metrics.find(R"(kotae_answer_cache_total{result="hit"} 1)"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find(R"(kotae_answer_cache_total{result="miss"} 3)"), std::string::npos);
  http_request("DELETE", server_->url("/v1/collections/cache-test"));
}

TEST_F(ServerTest, MetricsPassPromtoolAndCountWhatHappened) {
  post("/v1/ask", {{"collection", "faq"}, {"question", "What is a virtual package?"}});
  post("/v1/search", {{"collection", "faq"}, {"query", "dpkg"}});
  post("/v1/embeddings", {{"input", "hello"}});
  get("/v1/nothing");
  auto reply = get("/metrics");
  ASSERT_EQ(reply.status, 200);
  EXPECT_NE(reply.headers["content-type"].find("text/plain"), std::string::npos);
  const auto& text = reply.body;
  for (const char* expected :
       {R"(kotae_stage_seconds_count{stage="end_to_end"} 1)", R"(kotae_stage_seconds_count{stage="embed"})",
        R"(kotae_stage_seconds_count{stage="rerank"})", R"(kotae_stage_seconds_count{stage="generate"} 1)",
        R"(kotae_http_requests_total{method="POST",route="/v1/ask",status="2xx"} 1)",
        R"(kotae_http_requests_total{method="GET",route="unmatched",status="4xx"} 1)",
        R"(kotae_http_request_duration_seconds_count{method="POST",route="/v1/search"} 1)",
        R"(kotae_build_info{version=")", "process_cpu_seconds_total ", "process_resident_memory_bytes ",
        "process_open_fds ", "process_start_time_seconds ",
        R"(kotae_model_info{model="all-minilm-l6-v2",provider="CPUExecutionProvider"} 1)", "kotae_batch_size_bucket",
        "kotae_batch_queue_depth", "kotae_work_queue", "kotae_audit_events_dropped",
        "kotae_retrieved_similarity_bucket", R"(kotae_answers_total{backend="extractive",cached="false"} 1)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
  if (!probe_gpus().present) {  // the GPU series only where NVML lists a GPU
    for (const char* absent :
         {"kotae_gpu_utilization_ratio", "kotae_gpu_memory_used_bytes", "kotae_gpu_temperature_celsius"}) {
      EXPECT_EQ(text.find(absent), std::string::npos) << absent;
    }
  }
  const auto file = dir_ / "metrics.txt";
  std::ofstream(file) << text;
  const int status = std::system(
      ("promtool check metrics < " + file.string() + " > " + (dir_ / "promtool.txt").string() + " 2>&1").c_str());
  std::ifstream in(dir_ / "promtool.txt");
  const std::string said{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(status, 0) << said;
}

TEST_F(ServerTest, SigtermStopsTheServerCleanly) {
  EXPECT_EQ(get("/healthz").status, 200);
  EXPECT_EQ(server_->terminate(), 0);
  EXPECT_NE(server_->log().find(R"("event":"stopped")"), std::string::npos);
}

// A server with API keys: tenants a and b, an admin, and a key limited to 2 requests then 1 per 10 s.
class TenantTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_temp_dir("kotae-tenants");
    json keys{{"keys", json::array({{{"name", "a"}, {"tenant", "alpha"}, {"sha256", sha256_hex("key-a")}},
                                    {{"name", "b"}, {"tenant", "beta"}, {"sha256", sha256_hex("key-b")}},
                                    {{"name", "ops"}, {"admin", true}, {"sha256", sha256_hex("key-admin")}},
                                    {{"name", "slow"},
                                     {"tenant", "gamma"},
                                     {"sha256", sha256_hex("key-slow")},
                                     {"rate_per_second", 0.1},
                                     {"burst", 2}}})}};
    std::ofstream(dir_ / "keys.json") << keys.dump();
    data_ = dir_ / "data";
    fs::create_directories(data_);
    fs::create_symlink(fs::path(KOTAE_SERVER_DATA) / "models", data_ / "models");
    server_ = std::make_unique<KotaeServerProcess>(
        KOTAE_BINARY, std::vector<std::string>{"--data", data_.string(), "--api-keys", (dir_ / "keys.json").string()},
        dir_ / "server.log");
    ASSERT_EQ(server_->error(), "");
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }
  HttpReply call(const std::string& method, const std::string& path, const std::string& key,
                 const json& body = nullptr) {
    std::vector<std::string> headers = {"Content-Type: application/json"};
    if (!key.empty()) headers.push_back("Authorization: Bearer " + key);
    return http_request(method, server_->url(path), body.is_null() ? "" : body.dump(), headers);
  }

  fs::path dir_, data_;
  std::unique_ptr<KotaeServerProcess> server_;
};

TEST_F(TenantTest, ATenantCanNeitherListReadQueryNorDeleteAnothersCollections) {
  ASSERT_EQ(call("POST", "/v1/collections", "key-a", {{"name", "secret"}}).status, 201);
  auto upload = http_request("POST", server_->url("/v1/collections/secret/documents"),
                             form({{"plans.md", "The launch code is 0000 and the plan is in the safe.\n"}}, "tb"),
                             {"Content-Type: multipart/form-data; boundary=tb", "Authorization: Bearer key-a"});
  ASSERT_EQ(upload.status, 202);
  const std::string job = json::parse(upload.body)["id"];
  for (int i = 0; i < 600 && !json::parse(call("GET", "/v1/jobs/" + job, "key-a").body)["finished_at"].is_number();
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const json question{{"collection", "secret"}, {"question", "What is the launch code?"}};
  EXPECT_EQ(call("POST", "/v1/ask", "key-a", question).status, 200);

  EXPECT_TRUE(json::parse(call("GET", "/v1/collections", "key-b").body)["data"].empty());
  EXPECT_EQ(call("GET", "/v1/collections/secret", "key-b").status, 404);
  EXPECT_EQ(call("GET", "/v1/collections/secret/documents", "key-b").status, 404);
  EXPECT_EQ(call("POST", "/v1/search", "key-b", {{"collection", "secret"}, {"query", "launch code"}}).status, 404);
  EXPECT_EQ(call("POST", "/v1/ask", "key-b", question).status, 404);
  EXPECT_EQ(call("GET", "/v1/jobs/" + job, "key-b").status, 404);
  EXPECT_TRUE(json::parse(call("GET", "/v1/jobs", "key-b").body)["data"].empty());
  EXPECT_EQ(call("DELETE", "/v1/collections/secret", "key-b").status, 404);
  EXPECT_EQ(call("DELETE", "/v1/jobs/" + job, "key-b").status, 404);
  // b's own collection of the same name is another collection.
  EXPECT_EQ(call("POST", "/v1/collections", "key-b", {{"name", "secret"}}).status, 201);
  EXPECT_EQ(json::parse(call("GET", "/v1/collections/secret", "key-b").body)["documents"], 0);
  EXPECT_EQ(json::parse(call("GET", "/v1/collections/secret", "key-a").body)["documents"], 1);

  // The admin may act for a tenant; a tenant may not.
  EXPECT_EQ(http_request("GET", server_->url("/v1/collections/secret"), "",
                         {"Authorization: Bearer key-b", "X-Kotae-Tenant: alpha"})
                .status,
            403);
  auto as_admin = http_request("GET", server_->url("/v1/collections/secret"), "",
                               {"Authorization: Bearer key-admin", "X-Kotae-Tenant: alpha"});
  EXPECT_EQ(json::parse(as_admin.body)["documents"], 1);
  EXPECT_EQ(call("DELETE", "/v1/collections/secret", "key-a").status, 200);
}

TEST_F(TenantTest, KeysAreRequiredCheckedAndRateLimited) {
  auto none = call("GET", "/v1/collections", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.headers["www-authenticate"], "Bearer");
  EXPECT_EQ(json::parse(none.body)["error"]["code"], "invalid_api_key");
  EXPECT_EQ(call("GET", "/v1/collections", "key-wrong").status, 401);
  EXPECT_EQ(http_request("GET", server_->url("/v1/collections"), "", {"X-API-Key: key-a"}).status, 200);
  EXPECT_EQ(call("GET", "/healthz", "").status, 200);  // health and the API's description are open
  EXPECT_EQ(call("GET", "/openapi.json", "").status, 200);
  EXPECT_EQ(call("GET", "/metrics", "key-a").status, 403);
  EXPECT_EQ(call("GET", "/metrics", "key-admin").status, 200);

  EXPECT_EQ(call("GET", "/v1/collections", "key-slow").status, 200);
  EXPECT_EQ(call("GET", "/v1/collections", "key-slow").status, 200);
  auto limited = call("GET", "/v1/collections", "key-slow");
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(json::parse(limited.body)["error"]["code"], "rate_limited");
  const int retry = std::stoi(limited.headers["retry-after"]);
  EXPECT_GE(retry, 1);
  EXPECT_LE(retry, 10);
  EXPECT_EQ(call("GET", "/v1/collections", "key-a").status, 200);  // other keys are not slowed
}

// An embeddings request that keeps a worker busy for a few seconds (128 texts of ~100 tokens).
json slow_embeddings() {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "Debian packages are installed with apt and dpkg. ";
  json input = json::array();
  for (int i = 0; i < 128; ++i) input.push_back(text + std::to_string(i));
  return {{"input", input}};
}

TEST(ServerLifecycleTest, SigtermLetsARequestInFlightFinish) {
  const auto dir = fresh_temp_dir("kotae-server-sigterm");
  KotaeServerProcess server(KOTAE_BINARY, {"--data", KOTAE_SERVER_DATA}, dir / "server.log");
  ASSERT_EQ(server.error(), "");
  HttpReply slow;
  std::thread client([&] {
    slow = http_request("POST", server.url("/v1/embeddings"), slow_embeddings().dump(),
                        {"Content-Type: application/json"}, 300);
  });
  // Wait until the request is being worked on, then ask the server to stop.
  for (int i = 0; i < 200; ++i) {
    auto metrics = http_request("GET", server.url("/metrics"));
    if (metrics.body.find("kotae_work_queue{state=\"busy\"} 1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(server.pid(), SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_NE(http_request("GET", server.url("/healthz"), "", {}, 5).status, 200);  // no longer accepting
  client.join();
  EXPECT_EQ(slow.status, 200) << slow.error;
  EXPECT_EQ(json::parse(slow.body)["data"].size(), 128u);
  EXPECT_EQ(server.terminate(), 0);
  fs::remove_all(dir);
}

TEST(ServerLifecycleTest, AFullWorkQueueAnswers503WithARetryHint) {
  const auto dir = fresh_temp_dir("kotae-server-overload");
  KotaeServerProcess server(KOTAE_BINARY, {"--data", KOTAE_SERVER_DATA, "--workers", "1", "--max-queued", "1"},
                            dir / "server.log");
  ASSERT_EQ(server.error(), "");
  const auto body = slow_embeddings().dump();
  std::vector<HttpReply> replies(4);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      replies[i] = http_request("POST", server.url("/v1/embeddings"), body, {"Content-Type: application/json"}, 300);
    });
  }
  for (auto& c : clients) c.join();
  int ok = 0, refused = 0;
  for (const auto& r : replies) {
    if (r.status == 200) ++ok;
    if (r.status == 503) {
      ++refused;
      EXPECT_EQ(json::parse(r.body)["error"]["code"], "overloaded");
      EXPECT_EQ(r.headers.at("retry-after"), "1");
    }
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(refused, 1);
  EXPECT_EQ(ok + refused, 4);
  fs::remove_all(dir);
}

// Plain chat completions (no collection) from a local GGUF: SmolLM2-135M-Instruct, a real
// instruction-tuned model (scripts/setup installs it), streamed and not; and its one slot's queue full.
class ServerChatTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kotae-server-chat-" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    // Models load only from the data folder's models (integrity gate): the installed ones linked in.
    ASSERT_TRUE(link_installed_model(kDefaultEmbeddingModel, models_dir(*dir_ / "data")));
    ASSERT_TRUE(link_installed_model("smollm2-135m-instruct", models_dir(*dir_ / "data")));
    server_ =
        new KotaeServerProcess(KOTAE_BINARY,
                               {"--data", (*dir_ / "data").string(), "--model", "smollm2-135m-instruct", "--context",
                                "2048", "--threads", "2", "--parallel", "1", "--max-queued-generations", "1"},
                               *dir_ / "server.log");
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static HttpReply chat(const json& request) {
    return http_request("POST", server_->url("/v1/chat/completions"), request.dump(),
                        {"Content-Type: application/json"},
                        300);  // a loaded machine generates slowly
  }
  static inline fs::path* dir_ = nullptr;
  static inline KotaeServerProcess* server_ = nullptr;
};

TEST_F(ServerChatTest, PlainChatCompletionsComeFromTheLocalModelStreamedAndNot) {
  ASSERT_EQ(server_->error(), "");
  json request{{"model", "smollm2"},
               {"max_tokens", 32},
               {"temperature", 0},
               {"messages",
                {{{"role", "system"}, {"content", "You are a helpful assistant. Answer in one short sentence."}},
                 {{"role", "user"}, {"content", "What is the capital of France?"}}}}};
  auto whole = chat(request);
  ASSERT_EQ(whole.status, 200) << whole.body;
  auto body = json::parse(whole.body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "smollm2");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  const auto text = body["choices"][0]["message"]["content"].get<std::string>();
  EXPECT_NE(text.find("Paris"), std::string::npos) << text;
  EXPECT_LE(body["usage"]["completion_tokens"].get<int>(), 32);
  EXPECT_GT(body["usage"]["prompt_tokens"].get<int>(), 10);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");

  request["stream"] = true;
  auto streamed = chat(request);
  ASSERT_EQ(streamed.status, 200);
  const auto events = parse_events(streamed.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(json::parse(events.front().second)["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(events.back().second, "[DONE]");
  std::string pieces;
  for (std::size_t i = 1; i + 2 < events.size(); ++i) {
    pieces += json::parse(events[i].second)["choices"][0]["delta"].value("content", "");
  }
  EXPECT_EQ(pieces, text) << "the same greedy answer, piece by piece";
  const auto last = json::parse(events[events.size() - 2].second);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");

  auto models = json::parse(http_request("GET", server_->url("/v1/models")).body);
  bool has_chat = false;
  for (const auto& m : models["data"]) has_chat = has_chat || m["kind"] == "chat";
  EXPECT_TRUE(has_chat);
  const auto metrics = http_request("GET", server_->url("/metrics")).body;
  for (const char* expected :
       {R"(kotae_prompt_tokens_total{backend="llama.cpp"})", R"(kotae_generated_tokens_total{backend="llama.cpp"})",
        R"(kotae_time_to_first_token_seconds_count{backend="llama.cpp"} 2)"}) {
    EXPECT_NE(metrics.find(expected), std::string::npos) << expected;
  }
  auto too_long = chat(json{{"messages", {{{"role", "user"}, {"content", std::string(40000, 'a')}}}}});
  EXPECT_EQ(too_long.status, 400);  // longer than the context: refused, never overflowed
}

TEST_F(ServerChatTest, WithItsSlotBusyAndItsQueueFullAQuestionIsRefusedWith503AndRetryAfter) {
  ASSERT_EQ(server_->error(), "");
  // Four long answers at once for one slot and one place in the queue: at least one is refused at once.
  const json request{
      {"max_tokens", 120},
      {"temperature", 0},
      {"messages", {{{"role", "user"}, {"content", "Count from 1 to 500, with every number written in words."}}}}};
  std::vector<HttpReply> replies(4);
  std::vector<std::thread> clients;
  for (auto& reply : replies) clients.emplace_back([&] { reply = chat(request); });
  for (auto& c : clients) c.join();
  int ok = 0, refused = 0;
  for (const auto& reply : replies) {
    if (reply.status == 200) ++ok;
    if (reply.status == 503) {
      ++refused;
      EXPECT_EQ(json::parse(reply.body)["error"]["code"], "overloaded") << reply.body;
      EXPECT_EQ(reply.headers.at("retry-after"), "1");
    }
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(refused, 1);
  EXPECT_EQ(ok + refused, 4);
}

TEST(ServerStartTest, SettingsComeFromAConfigFileAndTheEnvironment) {
  const auto dir = fresh_temp_dir("kotae-server-config");
  std::ofstream(dir / "kotae.toml") << "[serve]\nmax-body-bytes = 1000\n";
  std::ofstream(dir / "keys.json")
      << json{{"keys", {{{"name", "k"}, {"tenant", "t"}, {"sha256", sha256_hex("the-key")}}}}}.dump();
  ::setenv("KOTAE_API_KEYS", (dir / "keys.json").c_str(), 1);
  KotaeServerProcess server(KOTAE_BINARY, {"--data", KOTAE_SERVER_DATA, "--config", (dir / "kotae.toml").string()},
                            dir / "server.log");
  ::unsetenv("KOTAE_API_KEYS");
  ASSERT_EQ(server.error(), "");
  EXPECT_EQ(http_request("GET", server.url("/v1/collections")).status, 401);  // keys from the environment
  const std::vector<std::string> key = {"Authorization: Bearer the-key"};
  EXPECT_EQ(http_request("GET", server.url("/v1/collections"), "", key).status, 200);
  EXPECT_EQ(http_request("POST", server.url("/v1/search"), std::string(2000, ' '), key).status,
            413);  // the file's limit
  fs::remove_all(dir);
}

TEST(ServerStartTest, RefusesAnOpenAddressWithoutKeys) {
  const auto dir = fresh_temp_dir("kotae-server-open");
  KotaeServerProcess server(KOTAE_BINARY, {"--data", KOTAE_SERVER_DATA, "--host", "0.0.0.0"}, dir / "server.log");
  EXPECT_NE(server.error(), "");
  EXPECT_NE(server.log().find("--allow-open"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kotae::testing
