// `kotae ask` as a user runs it: the real binary on the Debian FAQ indexed into a data directory of its
// own (models hard-linked from the one scripts/setup filled).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>

#include <nlohmann/json.hpp>

#include "support/base64.h"
#include "support/command_runner.h"
#include "support/office_files.h"
#include "support/scans.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"
#include "support/write_zip.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;

class AskCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("kotae-ask-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "data");
    // Models load only from the data directory's own models folder: the embedding model linked in, the
    // tiny chat model installed with `kotae model add`.
    ASSERT_TRUE(testing::link_installed_model(kDefaultEmbeddingModel, models_dir(root_ / "data")));
    const auto indexed = kotae("index /usr/share/doc/debian/FAQ --include '*.en.html' --collection faq");
    ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
    ASSERT_TRUE(testing::write_tiny_llama_gguf(root_ / "tiny-chat.gguf", {.context = 4096, .with_tokenizer = true}));
    const auto added = kotae("model add " + (root_ / "tiny-chat.gguf").string() + " --name tiny-chat");
    ASSERT_EQ(added.exit_code, 0) << added.err;
    // The same in Q4_K: llama.cpp's quantised kernels (AMX where the CPU has it) on the long prompt.
    ASSERT_TRUE(testing::write_tiny_llama_gguf(root_ / "tiny-chat-q4k.gguf", {.embedding = 256,
                                                                              .feed_forward = 512,
                                                                              .context = 4096,
                                                                              .with_tokenizer = true,
                                                                              .weights = testing::TinyWeights::q4_k}));
    const auto added_q4k = kotae("model add " + (root_ / "tiny-chat-q4k.gguf").string() + " --name tiny-chat-q4k");
    ASSERT_EQ(added_q4k.exit_code, 0) << added_q4k.err;
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static testing::CommandRun kotae(const std::string& args) {
    return testing::run_command(std::string(KOTAE_BINARY) + " " + args + " --data " + (root_ / "data").string(),
                                root_ / "stderr.txt");
  }
  static nlohmann::json ask_json(const std::string& args) {
    const auto run = kotae("ask " + args + " --json");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json();
  }

  static inline fs::path root_;
};

// Slides and e-books are indexed and asked like any document, and a citation names its slide.
TEST_F(AskCommandTest, AnswersFromSlidesAndEbooksAndNamesTheSlide) {
  const fs::path office = root_ / "office";
  fs::create_directories(office);
  using testing::pptx_shape, testing::pptx_slide;
  testing::write_zip(
      office / "harbour-review.pptx",
      testing::pptx_presentation(
          {{1, pptx_slide(pptx_shape({"Harbour review"}, 0, 0, "title") +
                          pptx_shape({"Berths, cranes and the ferry timetable."}, 500))},
           {2, pptx_slide(pptx_shape({"Lighthouse upkeep"}, 0, 0, "title") +
                          pptx_shape({"The lighthouse lamp is replaced every spring by the harbour crew."}, 500))}}));
  testing::write_zip(office / "island-notes.epub",
                     testing::epub_book({{"ch1.xhtml",
                                          "<h1>Quokkas</h1><p>Quokkas live on Rottnest Island, "
                                          "off the coast of Western Australia.</p>"}},
                                        "Island notes"));
  const auto indexed = kotae("index " + office.string() + " --collection office");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;

  const auto lamp = ask_json("'How often is the lighthouse lamp replaced?' --collection office");
  ASSERT_FALSE(lamp["sources"].empty()) << lamp.dump(2);
  const auto& top = lamp["sources"][0];
  EXPECT_EQ(top["format"], "pptx") << lamp.dump(2);
  EXPECT_EQ(top["page_first"], 2) << lamp.dump(2);
  EXPECT_EQ(top["heading_path"], nlohmann::json::array({"Lighthouse upkeep"})) << lamp.dump(2);
  const auto printed = kotae("ask 'How often is the lighthouse lamp replaced?' --collection office");
  EXPECT_NE(printed.out.find("harbour-review.pptx, slide 2)"), std::string::npos) << printed.out;

  const auto quokkas = ask_json("'Where do quokkas live?' --collection office");
  ASSERT_FALSE(quokkas["sources"].empty()) << quokkas.dump(2);
  EXPECT_EQ(quokkas["sources"][0]["format"], "epub") << quokkas.dump(2);
  EXPECT_EQ(quokkas["sources"][0]["title"], "Island notes") << quokkas.dump(2);
  EXPECT_NE(quokkas["answer"].get<std::string>().find("Rottnest"), std::string::npos) << quokkas.dump(2);
}

TEST_F(AskCommandTest, AnswersFromAMailsPdfAttachmentUnderTheMail) {
  const fs::path mail = root_ / "mail";
  fs::create_directories(mail);
  std::ifstream pdf(fs::path(KOTAE_EXAMPLES_DIR) / "sqlite-when-to-use.pdf", std::ios::binary);
  const std::string pdf_bytes((std::istreambuf_iterator<char>(pdf)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(pdf_bytes.empty());
  std::ofstream(mail / "database-choice.eml", std::ios::binary)
      << "From: Ann <ann@example.org>\r\nTo: team@example.org\r\nSubject: Which database for the kiosk?\r\n"
         "Date: Mon, 07 Dec 2026 09:30:00 +0100\r\nMIME-Version: 1.0\r\n"
         "Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n"
         "The kiosk needs a database; the SQLite guide is attached.\r\n--b\r\n"
         "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"sqlite-when-to-use.pdf\"\r\n"
         "Content-Transfer-Encoding: base64\r\n\r\n"
      << testing::base64(pdf_bytes) << "\r\n--b--\r\n";
  const auto indexed = kotae("index " + mail.string() + " --collection mail");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;

  const auto answer = ask_json("'What does SQLite compete with?' --collection mail");
  ASSERT_FALSE(answer["sources"].empty()) << answer.dump(2);
  bool under_the_attachment = false;
  for (const auto& source : answer["sources"]) {
    EXPECT_EQ(source["format"], "eml") << answer.dump(2);
    EXPECT_EQ(source["title"], "Which database for the kiosk?") << answer.dump(2);
    const auto& path = source["heading_path"];
    under_the_attachment |= path.size() >= 2 && path[1] == "Attachment: sqlite-when-to-use.pdf";
  }
  EXPECT_TRUE(under_the_attachment) << answer.dump(2);
  // The answer quotes the PDF, which only the attachment holds.
  EXPECT_NE(answer["answer"].get<std::string>().find("client/server"), std::string::npos) << answer.dump(2);
}

TEST_F(AskCommandTest, AnswersFromAScanAndAPhotoWithThePageAndTheBoxesOfTheCitedLines) {
  // The example PDF's pages 1-2 as an image-only PDF and its page 3 as a PNG, at 200 dpi; nothing
  // born-digital in the collection.
  const fs::path scans = root_ / "scans";
  fs::create_directories(scans);
  std::ifstream in(fs::path(KOTAE_EXAMPLES_DIR) / "sqlite-when-to-use.pdf", std::ios::binary);
  const std::string pdf_bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::unique_ptr<poppler::document> pdf(
      poppler::document::load_from_raw_data(pdf_bytes.data(), static_cast<int>(pdf_bytes.size())));
  ASSERT_TRUE(pdf);
  const testing::PixPtr one = testing::render_page(*pdf, 0, 200), two = testing::render_page(*pdf, 1, 200),
                        three = testing::render_page(*pdf, 2, 200);
  std::ofstream(scans / "scanned-guide.pdf", std::ios::binary) << testing::scanned_pdf({one.get(), two.get()}, 200);
  std::ofstream(scans / "photo-of-page-3.png", std::ios::binary) << testing::encode_image(three.get(), IFF_PNG);
  const auto indexed = kotae("index " + scans.string() + " --collection scans");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;

  // The citation of OCR'd text names its page and carries the boxes of its lines (fractions of the page).
  const auto cited_with_boxes = [](const nlohmann::json& answer, const std::string& format, int page) {
    for (const auto& c : answer["citations"]) {
      if (!c["document"].get<std::string>().ends_with(format) || c["page"] != page || c["boxes"].empty()) continue;
      for (const auto& box : c["boxes"]) {
        EXPECT_EQ(box["page"], page);
        EXPECT_LT(box["left"].get<double>(), box["right"].get<double>());
        EXPECT_LT(box["top"].get<double>(), box["bottom"].get<double>());
        EXPECT_LE(box["bottom"].get<double>(), 1.0);
      }
      return true;
    }
    return false;
  };
  const auto cache = ask_json("'Can SQLite be a cache for enterprise data?' --collection scans");
  EXPECT_TRUE(cited_with_boxes(cache, ".pdf", 2)) << cache.dump(2);
  const auto fossil = ask_json("'Which Fossil version offers SQLite Archive files as a download?' --collection scans");
  EXPECT_TRUE(cited_with_boxes(fossil, ".png", 1)) << fossil.dump(2);
  EXPECT_NE(fossil["answer"].get<std::string>().find("2.5"), std::string::npos) << fossil.dump(2);
}

TEST_F(AskCommandTest, AnswersFromSpreadsheetsAndCsvWithTheRowUnderItsHeader) {
  const fs::path tables = root_ / "tables";
  fs::create_directories(tables);
  std::string rows =
      R"(<row r="1"><c t="inlineStr"><is><t>Vessel</t></is></c><c t="inlineStr"><is><t>Berth</t></is></c>)"
      R"(<c t="inlineStr"><is><t>Arrival</t></is></c></row>)";
  const char* vessels[] = {"Aurora", "Borealis", "Cassiopeia", "Draco", "Eridanus", "Fornax"};
  for (int i = 0; i < 6; ++i) {
    rows += "<row r=\"" + std::to_string(i + 2) + "\"><c t=\"inlineStr\"><is><t>" + vessels[i] + "</t></is></c><c><v>" +
            std::to_string(i + 11) + "</v></c><c s=\"1\"><v>" + std::to_string(46360 + i) + "</v></c></row>";
  }
  testing::write_zip(tables / "harbour.xlsx", testing::xlsx_workbook({{"Arrivals", rows}}));
  std::ofstream(tables / "tides.csv") << "Day;High tide;Low tide\nMonday;06:12;12:30\nTuesday;06:58;13:15\n";
  const auto indexed = kotae("index " + tables.string() + " --collection tables");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;

  const auto draco = ask_json("'At which berth does the Draco arrive?' --collection tables");
  ASSERT_FALSE(draco["sources"].empty()) << draco.dump(2);
  const auto& sheet = draco["sources"][0];
  EXPECT_EQ(sheet["format"], "xlsx") << draco.dump(2);
  EXPECT_EQ(sheet["table"], "Arrivals") << draco.dump(2);
  EXPECT_EQ(sheet["heading_path"], nlohmann::json::array({"Arrivals"})) << draco.dump(2);
  bool cited_row = false;
  for (const auto& c : draco["citations"]) {
    if (c["text"] != "| Draco | 14 | 2026-12-07 |") continue;
    cited_row = true;
    EXPECT_EQ(c["table_header"], "| Vessel | Berth | Arrival |\n| --- | --- | --- |") << draco.dump(2);
  }
  EXPECT_TRUE(cited_row) << draco.dump(2);
  const auto printed = kotae("ask 'At which berth does the Draco arrive?' --collection tables");
  EXPECT_NE(printed.out.find("harbour.xlsx, sheet Arrivals, rows 2-7)"), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("      | Vessel | Berth | Arrival |"), std::string::npos) << printed.out;

  const auto tide = ask_json("'When is high tide on Tuesday?' --collection tables");
  ASSERT_FALSE(tide["sources"].empty()) << tide.dump(2);
  EXPECT_EQ(tide["sources"][0]["format"], "csv") << tide.dump(2);
  EXPECT_NE(tide["answer"].get<std::string>().find("| Tuesday | 06:58 | 13:15 [1] |"), std::string::npos)
      << tide.dump(2);
}

TEST_F(AskCommandTest, PrintsOneJsonObjectWithTheAnswerItsCitationsAndTimings) {
  const auto answer = ask_json("'What is a virtual package?' --collection faq");
  EXPECT_EQ(answer["backend"], "extractive");
  EXPECT_TRUE(answer["covered"].get<bool>());
  EXPECT_NE(answer["answer"].get<std::string>().find("generic name"), std::string::npos) << answer.dump(2);
  ASSERT_FALSE(answer["citations"].empty());
  for (const auto& c : answer["citations"]) {
    for (const char* key : {"document", "page", "start", "end", "text"}) EXPECT_TRUE(c.contains(key)) << key;
    EXPECT_EQ(c["end"].get<std::size_t>() - c["start"].get<std::size_t>(), c["text"].get<std::string>().size());
    EXPECT_TRUE(c["page"].is_null());  // HTML has no pages
  }
  EXPECT_TRUE(answer["citations"][0]["document"].get<std::string>().starts_with("/usr/share/doc/debian/FAQ/"));
  for (const char* stage : {"embed", "retrieve", "rerank", "generate", "total"}) {
    EXPECT_TRUE(answer["timings_ms"][stage].is_number()) << stage;
  }
  EXPECT_GT(answer["timings_ms"]["total"].get<double>(), 0);
}

TEST_F(AskCommandTest, StreamsTheAnswerThenListsTheSources) {
  const auto run = kotae("ask 'How do I upgrade to the next Debian release?' --collection faq");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("Release Notes"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nSources:\n  [1]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("answered by extractive"), std::string::npos) << run.out;
}

TEST_F(AskCommandTest, LocalModelsF32AndQuantisedAnswerAndAMissingOneFallsBack) {
  for (const char* model : {"tiny-chat", "tiny-chat-q4k"}) {
    const auto local = ask_json("'What is a virtual package?' --collection faq --model " + std::string(model) +
                                " --max-tokens 8 --seed 1");
    EXPECT_EQ(local["backend"], "llama.cpp") << model << ": " << local.dump(2);
    EXPECT_TRUE(local["fallbacks"].empty()) << model << ": " << local["fallbacks"].dump();
    EXPECT_GT(local["generation"]["prompt_tokens"].get<int>(), 100) << model;
    EXPECT_GT(local["generation"]["generated_tokens"].get<int>(), 0) << model;
  }

  const auto missing = ask_json("'What is a virtual package?' --collection faq --model absent");
  EXPECT_EQ(missing["backend"], "extractive");
  ASSERT_EQ(missing["fallbacks"].size(), 1u);
  EXPECT_EQ(missing["fallbacks"][0]["backend"], "llama.cpp");

  const auto only_llama = kotae("ask 'What is a virtual package?' --collection faq --backend llama --model absent");
  EXPECT_EQ(only_llama.exit_code, 2);
  EXPECT_NE(only_llama.err.find("no back-end could answer"), std::string::npos) << only_llama.err;
  EXPECT_NE(only_llama.err.find("model absent refused"), std::string::npos) << only_llama.err;

  // A GGUF file given by path is not loaded: models come only from the models folder.
  const auto by_path = kotae("ask 'What is a virtual package?' --collection faq --backend llama --model " +
                             (root_ / "tiny-chat.gguf").string());
  EXPECT_EQ(by_path.exit_code, 2);
  EXPECT_NE(by_path.err.find("kotae model add"), std::string::npos) << by_path.err;

  // A tampered installed model is refused before llama.cpp reads it, and the answer falls back.
  std::ofstream(root_ / "data" / "models" / "tiny-chat" / "model.gguf", std::ios::app | std::ios::binary) << "x";
  const auto tampered = ask_json("'What is a virtual package?' --collection faq --model tiny-chat");
  EXPECT_EQ(tampered["backend"], "extractive");
  ASSERT_EQ(tampered["fallbacks"].size(), 1u);
  EXPECT_NE(tampered["fallbacks"][0].dump().find("is oversized"), std::string::npos) << tampered["fallbacks"].dump();
}

TEST_F(AskCommandTest, ClearErrorsForAnUnknownCollectionOrBackEnd) {
  const auto unknown = kotae("ask 'anything' --collection nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("nope"), std::string::npos) << unknown.err;
  const auto bad_backend = kotae("ask 'anything' --collection faq --backend telepathy");
  EXPECT_EQ(bad_backend.exit_code, 2);
  EXPECT_NE(bad_backend.err.find("telepathy"), std::string::npos) << bad_backend.err;
}

}  // namespace
}  // namespace kotae
