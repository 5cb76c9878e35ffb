// EML (one RFC 5322 message) and MBOX (many, "From " separated) to text, through GMime 3: MIME parts,
// transfer encodings, RFC 2047 headers and charsets are GMime's to decode. Each message is a heading
// of its subject, then a block of its headers (From, To, Cc, Date, attachments), then its body: of a
// multipart/alternative the plain text, else the HTML through the HTML loader's reading; then each
// attached file Kotae reads (by its name's extension: a PDF, a spreadsheet, another mail) under a
// heading "Attachment: NAME", loaded by that format's loader with what is left of the text limit, its
// tables kept. An attachment that cannot be read is named with the reason in the headers block, and
// the rest of the message is indexed. A message inside a message (message/rfc822, a forwarded mail,
// an attached .eml) nests one level deeper; deeper than max_mail_depth is an error for the file. An
// EML's headers are also the document's metadata.

#include <gmime/gmime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/html_reader.h"

namespace kotae::text {
namespace {

void initialise_gmime() {
  static std::once_flag once;
  std::call_once(once, [] { g_mime_init(); });
}

struct Unref {
  void operator()(gpointer object) const { g_object_unref(object); }
};
template <class T>
using GPtr = std::unique_ptr<T, Unref>;

struct GFreeString {
  void operator()(char* s) const { g_free(s); }
};
using GString = std::unique_ptr<char, GFreeString>;

std::string addresses(InternetAddressList* list) {
  if (list == nullptr || internet_address_list_length(list) == 0) return "";
  return GString(internet_address_list_to_string(list, nullptr, FALSE)).get();
}

std::string iso_date(GDateTime* date) {
  if (date == nullptr) return "";
  return GString(g_date_time_format(date, "%Y-%m-%d %H:%M %z")).get();
}

// The Date header as ISO 8601 ("2024-05-01T10:30:00+02:00"): the metadata's `created`.
std::string iso_date_time(GDateTime* date) {
  if (date == nullptr) return "";
  return GString(g_date_time_format(date, "%Y-%m-%dT%H:%M:%S%:z")).get();
}

// A part's decoded bytes (base64 and quoted-printable undone).
std::string decoded_content(GMimePart* part) {
  GMimeDataWrapper* content = g_mime_part_get_content(part);
  if (content == nullptr) return "";
  GPtr<GMimeStream> stream(g_mime_stream_mem_new());
  g_mime_data_wrapper_write_to_stream(content, stream.get());
  GByteArray* bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(stream.get()));
  return std::string(reinterpret_cast<const char*>(bytes->data), bytes->len);
}

bool is_type(GMimeObject* object, const char* type, const char* subtype) {
  GMimeContentType* content_type = g_mime_object_get_content_type(object);
  return content_type != nullptr && g_mime_content_type_is_type(content_type, type, subtype);
}

// One message's reading into the builder, its parts in order.
class MessageReader {
 public:
  MessageReader(DocumentBuilder& out, const LoadLimits& limits) : out_(out), limits_(limits) {}

  // `depth`: 1 for the file's own messages, one more per message they hold.
  Result<void> read(GMimeMessage* message, int level, std::uint32_t depth) {
    if (depth > limits_.max_mail_depth) return too_deep();
    mail_depth_ = depth;
    body_level_ = level;
    const char* subject = g_mime_message_get_subject(message);
    out_.add_heading(level, subject != nullptr && *subject != '\0' ? subject : "(no subject)");
    // The body and the attachments first, so that the headers block can name them.
    Parts parts;
    collect(g_mime_message_get_mime_part(message), parts, 1);
    if (parts.error) return *parts.error;
    std::string headers;
    for (const auto& [name, value] : {std::pair<const char*, std::string>{"From", from_of(message)},
                                      {"To", addresses(g_mime_message_get_to(message))},
                                      {"Cc", addresses(g_mime_message_get_cc(message))},
                                      {"Date", iso_date(g_mime_message_get_date(message))}}) {
      if (!value.empty()) headers.append(name).append(": ").append(value).append("\n");
    }
    std::string attached;
    for (const auto& attachment : parts.attachments) {
      if (!attached.empty()) attached += ", ";
      attached += attachment.name;
      if (!attachment.problem.empty()) attached += " (not read: " + attachment.problem + ")";
    }
    if (!attached.empty()) headers += "Attachments: " + attached;
    out_.add_paragraph(headers);
    for (GMimeObject* body : parts.bodies) {
      if (auto body_read = read_body(body); !body_read) return body_read;
    }
    for (const auto& attachment : parts.attachments) {
      if (attachment.message != nullptr) {
        if (auto nested = read(attachment.message, level + 1, depth + 1); !nested) return nested;
      } else if (attachment.document) {
        out_.add_heading(level + 1, "Attachment: " + attachment.name);
        out_.add_document(*attachment.document);
      }
    }
    return {};
  }

  static std::string from_of(GMimeMessage* message) { return addresses(g_mime_message_get_from(message)); }

 private:
  struct Attachment {
    std::string name;
    GMimeMessage* message = nullptr;  // a message/rfc822 part's, owned by the part
    std::optional<Document> document;
    std::string problem;
  };
  struct Parts {
    std::vector<GMimeObject*> bodies;  // text parts, in order
    std::vector<Attachment> attachments;
    std::optional<Error> error;
  };

  Error too_deep() const {
    return make_error(ErrorCode::invalid_argument, "mail nests messages deeper than max_mail_depth (" +
                                                       std::to_string(limits_.max_mail_depth) + ")");
  }

  // Walks a part (`depth` multiparts deep): multiparts into their parts (of an alternative, the plain
  // text if there is one), text parts to the body, messages and named parts to the attachments.
  void collect(GMimeObject* object, Parts& parts, std::uint32_t depth) {
    if (object == nullptr || parts.error) return;
    if (GMIME_IS_MULTIPART(object)) {
      if (depth > limits_.max_depth) {
        parts.error = make_error(ErrorCode::invalid_argument, "MIME parts nest too deep, over max_depth (" +
                                                                  std::to_string(limits_.max_depth) + ")");
        return;
      }
      GMimeMultipart* multipart = GMIME_MULTIPART(object);
      const int count = g_mime_multipart_get_count(multipart);
      if (is_type(object, "multipart", "alternative")) {
        GMimeObject* chosen = nullptr;
        for (int i = 0; i < count; ++i) {
          GMimeObject* part = g_mime_multipart_get_part(multipart, i);
          if (chosen == nullptr || is_type(part, "text", "plain")) chosen = part;
        }
        return collect(chosen, parts, depth + 1);
      }
      for (int i = 0; i < count; ++i) collect(g_mime_multipart_get_part(multipart, i), parts, depth + 1);
      return;
    }
    if (GMIME_IS_MESSAGE_PART(object)) {
      GMimeMessage* message = g_mime_message_part_get_message(GMIME_MESSAGE_PART(object));
      if (message == nullptr) return;
      if (mail_depth_ + 1 > limits_.max_mail_depth) {
        parts.error = too_deep();
        return;
      }
      const char* subject = g_mime_message_get_subject(message);
      parts.attachments.push_back({subject != nullptr ? subject : "message", message, std::nullopt, ""});
      return;
    }
    if (!GMIME_IS_PART(object)) return;
    GMimePart* part = GMIME_PART(object);
    const char* filename = g_mime_part_get_filename(part);
    if (GMIME_IS_TEXT_PART(object) && !g_mime_part_is_attachment(part) &&
        (is_type(object, "text", "plain") || is_type(object, "text", "html"))) {
      parts.bodies.push_back(object);
      return;
    }
    if (filename == nullptr || *filename == '\0') return;  // an inline image, a signature
    const std::string format = document_format(filename);
    if ((format == "eml" || format == "mbox") && mail_depth_ + 1 > limits_.max_mail_depth) {
      parts.error = too_deep();
      return;
    }
    parts.attachments.push_back(load_attachment(part, filename, format));
    if (limit_error_) parts.error = limit_error_;
  }

  // A file attached: loaded by its format's loader within what is left of the limits (a mail inside
  // counts one level deeper); one Kotae does not read is listed by name only.
  Attachment load_attachment(GMimePart* part, const std::string& name, const std::string& format) {
    Attachment attachment{name, nullptr, std::nullopt, ""};
    if (format.empty()) return attachment;
    LoadLimits limits = limits_;
    limits.max_text_bytes = limits_.max_text_bytes - std::min(limits_.max_text_bytes, used_bytes_);
    limits.max_mail_depth = limits_.max_mail_depth - mail_depth_;
    const std::string bytes = decoded_content(part);
    if (bytes.size() > limits.max_file_bytes) {
      attachment.problem = "over max_file_bytes";
      return attachment;
    }
    auto document = load_document_bytes(bytes, format, limits);
    if (!document) {
      // A limit passed inside an attached mail is this mail's (a chain of .eml in .eml is as deep
      // as a forwarded chain); any other failure leaves the attachment out, named.
      if ((format == "eml" || format == "mbox") && document.error().code == ErrorCode::invalid_argument) {
        limit_error_ = document.error();
      }
      attachment.problem = document.error().message;
      return attachment;
    }
    used_bytes_ += document->text.size();
    attachment.document = std::move(*document);
    return attachment;
  }

  Result<void> read_body(GMimeObject* body) {
    GString text(g_mime_text_part_get_text(GMIME_TEXT_PART(body)));
    if (text == nullptr) return {};
    const std::string_view view(text.get());
    used_bytes_ += view.size();
    if (is_type(body, "text", "html")) {
      out_.nest_headings(body_level_);  // the page's h1 under the message's subject
      auto read = read_html(out_, view, limits_);
      out_.nest_headings(0);
      if (!read) return read.error();
      return {};
    }
    out_.add_paragraph(view);
    return {};
  }

  DocumentBuilder& out_;
  const LoadLimits& limits_;
  std::uint64_t used_bytes_ = 0;  // text read so far, which attachments' limits leave out
  std::uint32_t mail_depth_ = 1;  // of the message being read
  int body_level_ = 1;            // and of its subject's heading
  std::optional<Error> limit_error_;
};

Result<Document> load_mail(std::string_view bytes, const LoadLimits& limits, bool mbox) {
  initialise_gmime();
  GPtr<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(bytes.data(), bytes.size()));
  GPtr<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
  g_mime_parser_set_format(parser.get(), mbox ? GMIME_FORMAT_MBOX : GMIME_FORMAT_MESSAGE);
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  MessageReader reader(builder, limits);
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string title;
  std::uint32_t messages = 0;
  while (!g_mime_parser_eos(parser.get()) && !builder.stopped()) {
    GPtr<GMimeMessage> message(g_mime_parser_construct_message(parser.get(), nullptr));
    if (!message) break;
    if (++messages > limits.max_pages) {
      return make_error(ErrorCode::invalid_argument, "MBOX has more messages than allowed, over max_pages (" +
                                                         std::to_string(limits.max_pages) + ")");
    }
    if (auto read = reader.read(message.get(), 1, 1); !read) return read.error();
    if (messages == 1) {
      const char* subject = g_mime_message_get_subject(message.get());
      title = subject != nullptr ? subject : "";
      const char* id = g_mime_message_get_message_id(message.get());
      const std::string from = MessageReader::from_of(message.get());
      // The headers as they are, and as the properties every format has (title, author, created).
      for (const auto& [key, value] : {std::pair<const char*, std::string>{"from", from},
                                       {"to", addresses(g_mime_message_get_to(message.get()))},
                                       {"cc", addresses(g_mime_message_get_cc(message.get()))},
                                       {"date", iso_date(g_mime_message_get_date(message.get()))},
                                       {"subject", title},
                                       {"message_id", id != nullptr ? id : ""},
                                       {"title", title},
                                       {"author", from},
                                       {"created", iso_date_time(g_mime_message_get_date(message.get()))}}) {
        if (!value.empty()) metadata.emplace_back(key, value);
      }
    }
    if (!mbox) break;
  }
  if (messages == 0) {
    return make_error(ErrorCode::corrupt, mbox ? "corrupt MBOX: no message found" : "corrupt EML: no message found");
  }
  auto document = std::move(builder).finish(mbox ? "mbox" : "eml", mbox ? "" : title, 0);
  if (document && !mbox) document->metadata = std::move(metadata);
  return document;
}

}  // namespace

Result<Document> load_eml(std::string_view bytes, const LoadLimits& limits) {
  return load_mail(bytes, limits, false);
}

Result<Document> load_mbox(std::string_view bytes, const LoadLimits& limits) {
  return load_mail(bytes, limits, true);
}

}  // namespace kotae::text
