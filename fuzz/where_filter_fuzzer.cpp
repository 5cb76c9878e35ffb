// The metadata filter language (store/metadata_filter.h: `filters.where`, `--where`), whose text comes
// from any caller. The parser answers every input within its limits, with an error that names a
// column inside the text; a filter that parses is held against a collection's fields and evaluated
// against documents, and `not (F)` matches exactly where F does not.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/assert.h"
#include "store/metadata_filter.h"

namespace {

using kotae::store::DocumentMetadata;
using kotae::store::FieldSummary;
using kotae::store::MetadataFilter;

struct Collection {
  DocumentMetadata documents[3];
  FieldSummary fields;
  Collection() {
    documents[0] = DocumentMetadata::from_text(
        R"({"dept":"hr","year":2024,"score":4.5,"draft":false,"tags":["policy","leave"],"date":"2024-03-01",)"
        R"("sent":"2024-03-01T23:30:00+02:00","author":{"name":"Ana","team":{"id":7}}})");
    documents[1] = DocumentMetadata::from_text(
        R"({"dept":"legal","year":"unknown","draft":true,"tags":[],"date":"2023-12-31 09:00 +0100","n":null})");
    documents[2] = DocumentMetadata::from_text("{}");
    for (const auto& document : documents) fields.add(document);
  }
};

// The column an error names ("column N: ..."), or 0 for the length limit's message.
std::size_t error_column(const std::string& message) {
  if (!message.starts_with("column ")) {
    KOTAE_ASSERT(message.starts_with("the filter is "));
    return 0;
  }
  std::size_t column = 0;
  for (std::size_t i = 7; i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    column = column * 10 + static_cast<std::size_t>(message[i] - '0');
  }
  return column;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Collection collection;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = MetadataFilter::parse(text);
  if (!parsed) {
    const std::size_t column = error_column(parsed.error().message);
    KOTAE_ASSERT(column == 0 ? size > 4096 : column >= 1 && column <= size + 1);
    return 0;
  }
  const MetadataFilter& filter = **parsed;
  KOTAE_ASSERT(size <= 4096 && filter.terms() >= 1 && filter.terms() <= 64 && filter.text() == text);
  const bool fits = filter.check(collection.fields).ok();
  auto negated = MetadataFilter::parse("not (" + std::string(text) + ")");
  for (const auto& document : collection.documents) {
    const bool matched = filter.matches(document);
    if (negated) KOTAE_ASSERT((*negated)->matches(document) == !matched);
  }
  (void)fits;
  return 0;
}
