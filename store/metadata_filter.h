#pragma once
// The filter language over documents' metadata (`filters.where` in the API, `--where` in the CLI):
//
//   dept = "hr" and year >= 2024
//   tags has "policy"            tags has all ("a", "b")      tags has any ("a", "b")
//   dept in ("hr", "legal")      not draft = true             date >= 2024-01-01
//   (a = 1 or b = 2) and author.name != "x"
//
// Comparisons (= == != < <= > >=, in, has) of a field (an identifier; dots name keys of nested objects)
// with literals: strings ("..." or '...', with \" \' \\ \n \r \t \uXXXX), numbers, true/false, and ISO
// dates or date-times (2024-01-01, 2024-01-01T09:30:00Z, ...+02:00). `not` binds tighter than `and`,
// `and` tighter than `or`; parentheses group. docs/search.md has the whole language.
//
// Three parts: the parser (hard limits decided before any work: text, depth, terms; errors name the
// column), each document's metadata parsed once into DocumentMetadata (the derived indexes keep it),
// and a FieldSummary per collection (which fields exist and what their values are) that check()
// holds a filter against, so a misspelt field or a literal of the wrong type is an error naming it,
// not an empty result.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace kotae::store {

struct MetadataFilterLimits {
  std::size_t max_bytes = 4096;  // the expression's text
  std::size_t max_depth = 16;    // nested parentheses and `not`s
  std::size_t max_terms = 64;    // values compared, in all (`x in (1, 2)` is two)
};

// What a field's values are. A string that reads as an ISO date or date-time is a date.
enum class ValueKind : std::uint8_t { string, number, boolean, date, string_list, other };

// One value of a document's metadata, parsed once.
struct MetadataValue {
  ValueKind kind = ValueKind::other;
  std::string text;                // string and date: the text as stored
  double number = 0;               // number; boolean: 0 or 1
  std::int64_t instant_us = 0;     // date: microseconds since 1970-01-01T00:00Z
  std::vector<std::string> items;  // string_list, sorted and distinct
};

// A document's metadata as filters read it: the JSON object's leaves by dotted path (nested objects
// flattened: {"a": {"b": 1}} is "a.b"), each value parsed once. Objects nested deeper than 8, keys
// past 512 and lists past 1,024 strings are left out (stored metadata is bounded long before that).
class DocumentMetadata {
 public:
  static DocumentMetadata from_json(const nlohmann::json& object);
  // From the stored text; anything but a JSON object is an empty metadata.
  static DocumentMetadata from_text(std::string_view json_text);

  const MetadataValue* find(std::string_view path) const;
  // The paths of nested objects ("a" for {"a": {"b": 1}}): named alone they are not values.
  const std::vector<std::string>& objects() const { return objects_; }
  const std::map<std::string, MetadataValue, std::less<>>& fields() const { return fields_; }

 private:
  std::map<std::string, MetadataValue, std::less<>> fields_;
  std::vector<std::string> objects_;
};

// Which fields a collection's documents have, and of which kinds their values are (counted per
// document, so a document taken out is subtracted again).
class FieldSummary {
 public:
  void add(const DocumentMetadata& metadata);
  void remove(const DocumentMetadata& metadata);

  struct Kinds {
    std::size_t counts[6] = {0, 0, 0, 0, 0, 0};  // documents per ValueKind
    std::size_t objects = 0;                     // documents where the path is a nested object
    std::size_t count(ValueKind kind) const { return counts[static_cast<int>(kind)]; }
    bool empty() const;
    // "strings", "numbers", "dates", "lists of strings", "strings and numbers", "objects"...
    std::string describe() const;
  };
  // nullptr when no document has the field.
  const Kinds* find(std::string_view path) const;

 private:
  std::map<std::string, Kinds, std::less<>> fields_;
};

// A parsed filter: immutable, shared by the searches that use it.
class MetadataFilter {
 public:
  // The filter, or invalid_argument "column N: what was expected" (N counts characters from 1).
  static Result<std::shared_ptr<const MetadataFilter>> parse(std::string_view text,
                                                             const MetadataFilterLimits& limits = {});

  // invalid_argument naming the field when no document has it, or when a comparison's literal does
  // not fit what the field holds ("'year' holds numbers, not strings like \"2024\"").
  Result<void> check(const FieldSummary& fields) const;
  bool matches(const DocumentMetadata& metadata) const;
  bool matches(const nlohmann::json& metadata) const { return matches(DocumentMetadata::from_json(metadata)); }

  const std::string& text() const { return text_; }  // as given
  std::size_t terms() const { return terms_; }

  struct Node;
  ~MetadataFilter();
  MetadataFilter(std::string text, std::unique_ptr<Node> root, std::size_t terms);

 private:
  std::string text_;
  std::unique_ptr<Node> root_;
  std::size_t terms_ = 0;
};

// An ISO date (2024-01-01) or date-time (2024-01-01T09:30[:00[.123456]], 'T' or one space, then
// nothing (UTC), Z, +02:00, +0200 or " +0200" as e-mail headers have it) as microseconds since the epoch,
// with whether it named a whole day. False when `text` is not one.
bool parse_iso_instant(std::string_view text, std::int64_t& instant_us, bool& whole_day);

}  // namespace kotae::store
