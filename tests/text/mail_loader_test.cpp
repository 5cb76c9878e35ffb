// E-mail (text/loaders/mail_loader, GMime): messages written here as a mail client writes them, with
// their MIME structure, encodings and attachments.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/base64.h"
#include "support/test_data.h"
#include "text/loaders/loader.h"

namespace kotae::text {
namespace {

namespace fs = std::filesystem;

// A message of `headers` and a body.
std::string message(const std::string& headers, const std::string& body) {
  return headers + "MIME-Version: 1.0\r\n" + body;
}

// A multipart body of `parts` (each its headers, a blank line and content) under `type`.
std::string multipart(const std::string& type, const std::string& boundary, const std::vector<std::string>& parts) {
  std::string body = std::string("Content-Type: multipart/").append(type).append("; boundary=\"");
  body.append(boundary).append("\"\r\n\r\n");
  for (const auto& part : parts) body.append("--").append(boundary).append("\r\n").append(part).append("\r\n");
  return body.append("--").append(boundary).append("--\r\n");
}

std::string attachment(const std::string& name, const std::string& type, const std::string& base64) {
  return std::string("Content-Type: ")
      .append(type)
      .append("; name=\"")
      .append(name)
      .append("\"\r\nContent-Disposition: attachment; filename=\"")
      .append(name)
      .append("\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
      .append(base64);
}

class MailLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("kotae-mail-loader"); }
  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  fs::path dir_;
};

const std::string kHeaders =
    "From: Ann Keeper <ann@lighthouse.example>\r\nTo: Bob <bob@harbour.example>, crew@harbour.example\r\n"
    "Subject: =?UTF-8?B?TGFtcCBzY2hlZHVsZSDigJMgRGVjZW1iZXI=?=\r\nDate: Mon, 07 Dec 2026 09:30:00 +0100\r\n"
    "Message-ID: <lamp-1@lighthouse.example>\r\n";

TEST_F(MailLoaderTest, EmlHeadersBodyAndAttachmentsThroughTheirLoaders) {
  // "Vessel,Berth\nAurora,11\n" in base64; the SVG is not a format Kotae reads, the DOCX is broken.
  const std::string body = multipart(
      "mixed", "outer",
      {multipart("alternative", "alt",
                 {"Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                  "The lamp is replaced every spring. Caf=E9 at noon.",
                  "Content-Type: text/html\r\n\r\n<p>The <b>lamp</b> in HTML</p>"}),
       attachment("berths.csv", "text/csv", "VmVzc2VsLEJlcnRoCkF1cm9yYSwxMQo="),
       attachment("drawing.svg", "image/svg+xml", "PHN2Zy8+"),
       attachment("broken.docx", "application/zip", "UEsDBA==")});
  auto doc = load_document(write("lamp.eml", message(kHeaders, body)));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "eml");
  EXPECT_EQ(doc->title, "Lamp schedule \xE2\x80\x93 December");
  const std::string attachments_line =
      "Attachments: berths.csv, drawing.svg, broken.docx (not read: corrupt DOCX: not a readable zip archive";
  EXPECT_TRUE(
      doc->text.starts_with("Lamp schedule \xE2\x80\x93 December\n\nFrom: Ann Keeper <ann@lighthouse.example>\nTo: Bob "
                            "<bob@harbour.example>, crew@harbour.example\nDate: 2026-12-07 09:30 +0100\n" +
                            attachments_line))
      << doc->text;
  EXPECT_NE(doc->text.find("\n\nThe lamp is replaced every spring. Caf\xC3\xA9 at noon.\n\nAttachment: berths.csv\n\n"
                           "| Vessel | Berth |\n| --- | --- |\n| Aurora | 11 |"),
            std::string::npos)
      << doc->text;
  EXPECT_EQ(doc->text.find("in HTML"), std::string::npos);  // the alternative's plain text only
  // The attachment's table is still a table, under the message and the attachment.
  const auto& row = doc->segments.back();
  EXPECT_EQ(row.row, 2u);
  EXPECT_EQ(row.table, "Table 1");
  EXPECT_EQ(row.heading_path,
            (std::vector<std::string>{"Lamp schedule \xE2\x80\x93 December", "Attachment: berths.csv"}));
  const std::vector<std::pair<std::string, std::string>> metadata = {
      {"from", "Ann Keeper <ann@lighthouse.example>"},
      {"to", "Bob <bob@harbour.example>, crew@harbour.example"},
      {"date", "2026-12-07 09:30 +0100"},
      {"subject", "Lamp schedule \xE2\x80\x93 December"},
      {"message_id", "lamp-1@lighthouse.example"},
      // ... and as the properties every format has (text/document_metadata.h)
      {"title", "Lamp schedule \xE2\x80\x93 December"},
      {"author", "Ann Keeper <ann@lighthouse.example>"},
      {"created", "2026-12-07T09:30:00+01:00"}};
  EXPECT_EQ(doc->metadata, metadata);
}

TEST_F(MailLoaderTest, AnHtmlOnlyMailAndAForwardedOneOneLevelDeeper) {
  const std::string forwarded =
      "Content-Type: message/rfc822\r\n\r\nFrom: bob@harbour.example\r\nSubject: Original note\r\n"
      "Content-Type: text/plain\r\n\r\nThe ferry leaves at six.";
  const std::string body = multipart(
      "mixed", "b", {"Content-Type: text/html; charset=utf-8\r\n\r\n<h1>Fwd</h1><p>See below.</p>", forwarded});
  auto doc = load_document(write("fwd.eml", message("From: ann@lighthouse.example\r\nSubject: Fwd: note\r\n", body)));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->text,
            "Fwd: note\n\nFrom: ann@lighthouse.example\nAttachments: Original note\n\nFwd\n\nSee below.\n\n"
            "Original note\n\nFrom: bob@harbour.example\n\nThe ferry leaves at six.");
  EXPECT_EQ(doc->segments.back().heading_path, (std::vector<std::string>{"Fwd: note", "Original note"}));
}

TEST_F(MailLoaderTest, MboxMessagesAreSectionsOfOneDocument) {
  const std::string mbox =
      "From ann@lighthouse.example Mon Dec  7 09:30:00 2026\nFrom: ann@lighthouse.example\nSubject: First\n\n"
      "The lamp was cleaned.\n>From the tower, all is well.\n\n"
      "From bob@harbour.example Mon Dec  7 10:00:00 2026\nFrom: bob@harbour.example\n\nNo subject here.\n";
  auto doc = load_document(write("box.mbox", mbox));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->format, "mbox");
  EXPECT_EQ(doc->text,
            "First\n\nFrom: ann@lighthouse.example\n\nThe lamp was cleaned.\n>From the tower, all is well.\n\n"
            "(no subject)\n\nFrom: bob@harbour.example\n\nNo subject here.");
  EXPECT_EQ(doc->segments.back().heading_path, std::vector<std::string>{"(no subject)"});
  EXPECT_TRUE(doc->metadata.empty());  // many messages: the headers stay in the text
}

TEST_F(MailLoaderTest, NestingAndCountLimits) {
  // A message forwarded inside itself 100 times.
  std::string deep = "Subject: bottom\r\nContent-Type: text/plain\r\n\r\nthe end";
  for (int i = 0; i < 100; ++i) {
    deep = std::string("Subject: level ").append(std::to_string(i)).append("\r\nContent-Type: message/rfc822\r\n\r\n") +
           deep;
  }
  auto nested = load_document(write("deep.eml", deep));
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("max_mail_depth (4)"), std::string::npos) << nested.error().message;

  // An .eml attached in an .eml attached in...: the same limit, across the loaders.
  std::string attached = message("Subject: inner\r\n", "Content-Type: text/plain\r\n\r\ninnermost");
  for (int i = 0; i < 6; ++i) {
    attached = message("Subject: wrapper\r\n",
                       multipart("mixed", std::string("w").append(std::to_string(i)),
                                 {"Content-Type: text/plain\r\n\r\nsee attached",
                                  attachment("mail.eml", "message/x-eml", testing::base64(attached))}));
  }
  auto chain = load_document(write("chain.eml", attached));
  ASSERT_FALSE(chain);
  EXPECT_NE(chain.error().message.find("max_mail_depth"), std::string::npos) << chain.error().message;

  // 100,000 nested multiparts.
  std::string parts;
  for (int i = 0; i < 100000; ++i) parts += "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n";
  auto multiparts = load_document(write("multi.eml", message("Subject: s\r\n", parts)));
  ASSERT_FALSE(multiparts);
  EXPECT_NE(multiparts.error().message.find("max_depth (256)"), std::string::npos) << multiparts.error().message;

  LoadLimits limits;
  limits.max_pages = 2;
  std::string mbox;
  for (int i = 0; i < 3; ++i) mbox += "From a@b Mon Dec  7 09:30:00 2026\nSubject: m\n\nbody\n\n";
  auto many = load_document(write("many.mbox", mbox), limits);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("max_pages"), std::string::npos) << many.error().message;
}

}  // namespace
}  // namespace kotae::text
