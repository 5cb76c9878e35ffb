// The metadata filter language (store/metadata_filter): every operator against documents' metadata,
// precedence, dates (whole days, instants, offsets, e-mail dates), lists, nested keys, the errors'
// columns, the parser's limits, and the field summary's verdicts on unknown fields and wrong types.

#include "store/metadata_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kotae::store {
namespace {

using nlohmann::json;

const json kHr = {{"dept", "hr"},
                  {"year", 2024},
                  {"score", 4.5},
                  {"draft", false},
                  {"tags", json::array({"policy", "leave"})},
                  {"date", "2024-03-01"},
                  {"sent", "2024-03-01T23:30:00+02:00"},
                  {"author", {{"name", "Ana \"A\" Lima"}, {"team", {{"id", 7}}}}}};
const json kLegal = {{"dept", "legal"},      {"year", 2023},
                     {"draft", true},        {"tags", json::array({"contract"})},
                     {"date", "2023-12-31"}, {"sent", "2024-01-01 09:00 +0100"}};
const json kEmpty = json::object();

std::shared_ptr<const MetadataFilter> parse_ok(const std::string& text) {
  auto parsed = MetadataFilter::parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : nullptr;
}

// Which of hr, legal and empty the filter matches, as "hr legal".
std::string matched(const std::string& text) {
  auto filter = parse_ok(text);
  if (!filter) return "<parse error>";
  const std::vector<std::pair<std::string, json>> documents = {{"hr", kHr}, {"legal", kLegal}, {"empty", kEmpty}};
  std::string out;
  for (const auto& [name, metadata] : documents) {
    if (filter->matches(metadata)) out += (out.empty() ? "" : " ") + name;
  }
  return out;
}

std::string parse_error(const std::string& text, const MetadataFilterLimits& limits = {}) {
  auto parsed = MetadataFilter::parse(text, limits);
  EXPECT_FALSE(parsed.ok()) << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.error().code, ErrorCode::invalid_argument);
  return parsed.error().message;
}

TEST(MetadataFilter, ComparesStringsNumbersAndBooleans) {
  EXPECT_EQ(matched("dept = \"hr\""), "hr");
  EXPECT_EQ(matched("dept == 'legal'"), "legal");
  EXPECT_EQ(matched("dept != \"hr\""), "legal empty");  // != is `not =`: a document without the field too
  EXPECT_EQ(matched("year = 2024"), "hr");
  EXPECT_EQ(matched("year = 2024.0"), "hr");
  EXPECT_EQ(matched("year > 2023"), "hr");
  EXPECT_EQ(matched("year >= 2023"), "hr legal");
  EXPECT_EQ(matched("year < 2024"), "legal");
  EXPECT_EQ(matched("year <= 2024"), "hr legal");
  EXPECT_EQ(matched("score > 4.25"), "hr");
  EXPECT_EQ(matched("score < 45e-1"), "");
  EXPECT_EQ(matched("score <= 45e-1"), "hr");
  EXPECT_EQ(matched("year > -1"), "hr legal");
  EXPECT_EQ(matched("draft = true"), "legal");
  EXPECT_EQ(matched("draft = false"), "hr");
  EXPECT_EQ(matched("not draft = true"), "hr empty");
  EXPECT_EQ(matched("dept = \"HR\""), "");    // strings compare exactly
  EXPECT_EQ(matched("year = \"2024\""), "");  // a string is not the number
}

TEST(MetadataFilter, InHasAndNestedKeys) {
  EXPECT_EQ(matched("dept in (\"hr\", \"legal\")"), "hr legal");
  EXPECT_EQ(matched("dept in ('eng')"), "");
  EXPECT_EQ(matched("year in (2023, 2025)"), "legal");
  EXPECT_EQ(matched("tags has \"policy\""), "hr");
  EXPECT_EQ(matched("tags has \"polic\""), "");
  EXPECT_EQ(matched("tags has all (\"policy\", \"leave\")"), "hr");
  EXPECT_EQ(matched("tags has all (\"policy\", \"contract\")"), "");
  EXPECT_EQ(matched("tags HAS ANY (\"policy\", \"contract\")"), "hr legal");
  EXPECT_EQ(matched("author.name = \"Ana \\\"A\\\" Lima\""), "hr");
  EXPECT_EQ(matched("author.team.id = 7"), "hr");
  EXPECT_EQ(matched("author.team.id != 7"), "legal empty");
}

TEST(MetadataFilter, PrecedenceIsNotThenAndThenOr) {
  // a or (b and c), not (a or b) and c
  EXPECT_EQ(matched("dept = \"hr\" or dept = \"legal\" and year = 2024"), "hr");
  EXPECT_EQ(matched("(dept = \"hr\" or dept = \"legal\") and year = 2023"), "legal");
  EXPECT_EQ(matched("dept = \"legal\" and year = 2023 or dept = \"hr\""), "hr legal");
  EXPECT_EQ(matched("not dept = \"hr\" and year = 2023"), "legal");
  EXPECT_EQ(matched("not (dept = \"hr\" and year = 2023)"), "hr legal empty");
  EXPECT_EQ(matched("not not dept = \"hr\""), "hr");
  EXPECT_EQ(matched("dept = \"hr\" AND (year = 1 OR tags has 'leave')"), "hr");
}

TEST(MetadataFilter, DatesNameWholeDaysAndInstants) {
  EXPECT_EQ(matched("date = 2024-03-01"), "hr");
  EXPECT_EQ(matched("date >= 2024-01-01"), "hr");
  EXPECT_EQ(matched("date < 2024-01-01"), "legal");
  EXPECT_EQ(matched("date <= 2023-12-31"), "legal");  // through the end of that day
  EXPECT_EQ(matched("date > 2023-12-31"), "hr");
  EXPECT_EQ(matched("date >= \"2024-01-01\""), "hr");  // a quoted date compares as a date too
  EXPECT_EQ(matched("date = \"2024-03-01\""), "hr");
  // 2024-03-01T23:30+02:00 is 21:30 UTC: on March 1st in UTC, before 22:00Z.
  EXPECT_EQ(matched("sent = 2024-03-01"), "hr");
  EXPECT_EQ(matched("sent < 2024-03-01T22:00:00Z"), "hr legal");
  EXPECT_EQ(matched("sent > 2024-03-01T21:30:00Z"), "");
  EXPECT_EQ(matched("sent >= 2024-03-01T21:30:00Z"), "hr");
  EXPECT_EQ(matched("sent = 2024-03-01T23:30:00+02:00"), "hr");
  EXPECT_EQ(matched("sent = 2024-03-01T21:30:00.000Z"), "hr");
  // The e-mail loader's "2024-01-01 09:00 +0100" is 08:00 UTC.
  EXPECT_EQ(matched("sent = 2024-01-01T08:00Z"), "legal");
  EXPECT_EQ(matched("sent < 2024-01-01T08:00:01Z and sent > 2023-12-31"), "legal");

  std::int64_t instant = 0;
  bool whole_day = false;
  ASSERT_TRUE(parse_iso_instant("1970-01-02", instant, whole_day));
  EXPECT_EQ(instant, 86'400'000'000);
  EXPECT_TRUE(whole_day);
  ASSERT_TRUE(parse_iso_instant("2000-02-29T00:00:01.5-00:30", instant, whole_day));
  EXPECT_EQ(instant, (951782400LL + 1800 + 1) * 1'000'000 + 500'000);
  EXPECT_FALSE(whole_day);
  for (const char* bad : {"2023-02-29", "2024-13-01", "2024-1-01", "2024-01-01T25:00", "2024-01-01T10", "2024-01-01x",
                          "2024-01-01T10:00+5", "20240101"}) {
    EXPECT_FALSE(parse_iso_instant(bad, instant, whole_day)) << bad;
  }
}

TEST(MetadataFilter, StringEscapes) {
  const json metadata = {{"s", "tab\there \"q\" 'a' \\ é 😀"}};
  auto filter = parse_ok(R"(s = "tab\there \"q\" \'a\' \\ \u00e9 \ud83d\ude00")");
  ASSERT_TRUE(filter);
  EXPECT_TRUE(filter->matches(metadata));
  auto single = parse_ok(R"(s = 'tab\there "q" \'a\' \\ é 😀')");
  ASSERT_TRUE(single);
  EXPECT_TRUE(single->matches(metadata));
  EXPECT_EQ(parse_error(R"(s = "a\qb")"), "column 7: unknown escape '\\q'");
  EXPECT_EQ(parse_error(R"(s = "\ud83d")"), "column 6: a high surrogate \\u escape without its low half");
  EXPECT_EQ(parse_error(R"(s = "\u12")"), "column 6: expected four hex digits after \\u");
}

TEST(MetadataFilter, ErrorsSayWhere) {
  EXPECT_EQ(parse_error("year >= "), "column 9: expected a value");
  EXPECT_EQ(parse_error("dept = \"hr\" and year >= and"), "column 25: expected a value");
  EXPECT_EQ(parse_error(""), "column 1: expected a field name, not the end");
  EXPECT_EQ(parse_error("dept"),
            "column 5: expected a comparison (=, !=, <, <=, >, >=, in, has) after 'dept', not the end");
  EXPECT_EQ(parse_error("dept ~ 'x'"), "column 6: unexpected character '~'");
  EXPECT_EQ(parse_error("dept = 'hr"), "column 8: unterminated string");
  EXPECT_EQ(parse_error("(dept = 'hr'"), "column 13: expected ')', not the end");
  EXPECT_EQ(parse_error("dept = 'hr' year = 1"), "column 13: expected 'and', 'or' or the end, not 'year'");
  EXPECT_EQ(parse_error("dept in 'hr'"), "column 9: expected '(' and a list of values");
  EXPECT_EQ(parse_error("dept in ('hr' 'x')"), "column 15: expected ',' or ')', not a string");
  EXPECT_EQ(parse_error("and = 1"), "column 1: expected a field name, not 'and'");
  EXPECT_EQ(parse_error("date >= 2024-02-30"),
            "column 9: '2024-02-30' is not an ISO date (2024-01-31) or date-time (2024-01-31T09:30:00Z)");
  EXPECT_EQ(parse_error("year = 12abc"), "column 10: unexpected character 'a' in a number");
  EXPECT_EQ(parse_error("year = 1e999"), "column 8: '1e999' is not a number this filter can hold");
  EXPECT_EQ(parse_error("year ! 1"), "column 6: expected '!=' (not is written 'not')");
  // Columns count characters, not bytes.
  EXPECT_EQ(parse_error("name = \"é\" or"), "column 14: expected a field name, not the end");
}

TEST(MetadataFilter, LimitsAreDecidedBeforeWork) {
  const std::string long_text = "a = '" + std::string(4100, 'x') + "'";
  EXPECT_EQ(parse_error(long_text), "the filter is 4106 bytes, over the limit of 4096");

  auto nested = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '(') + "a = 1" +
           std::string(static_cast<std::size_t>(depth), ')');
  };
  EXPECT_TRUE(MetadataFilter::parse(nested(16)).ok());
  EXPECT_EQ(parse_error(nested(17)), "column 17: nested deeper than 16 (parentheses and 'not's)");
  std::string nots;
  for (int i = 0; i < 17; ++i) nots += "not ";
  EXPECT_EQ(parse_error(nots + "a = 1"), "column 65: nested deeper than 16 (parentheses and 'not's)");
  // 100,000 opening parentheses fail at the 17th, whatever follows (no recursion past the limit).
  MetadataFilterLimits wide;
  wide.max_bytes = 200'000;
  EXPECT_EQ(parse_error(std::string(100'000, '('), wide), "column 17: nested deeper than 16 (parentheses and 'not's)");

  auto terms = [](int n) {
    std::string text = "a in (";
    for (int i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(i);
    return text + ")";
  };
  auto sixty_four = MetadataFilter::parse(terms(64));
  ASSERT_TRUE(sixty_four.ok());
  EXPECT_EQ((*sixty_four)->terms(), 64u);
  EXPECT_NE(parse_error(terms(65)).find("more than 64 terms"), std::string::npos);
  std::string ors = "a = 0";
  for (int i = 1; i < 65; ++i) ors += " or a = " + std::to_string(i);
  EXPECT_NE(parse_error(ors).find("more than 64 terms"), std::string::npos);
}

// The collection's fields: hr, legal and an empty document.
FieldSummary summary() {
  FieldSummary fields;
  for (const json& metadata : {kHr, kLegal, kEmpty}) fields.add(DocumentMetadata::from_json(metadata));
  return fields;
}

std::string check_error(const std::string& text, const FieldSummary& fields = summary()) {
  auto filter = parse_ok(text);
  if (!filter) return "<parse error>";
  auto checked = filter->check(fields);
  return checked.ok() ? "" : checked.error().message;
}

TEST(MetadataFilter, UnknownFieldsAndWrongTypesAreNamed) {
  for (const char* fine : {"dept = 'hr'", "year >= 2020", "draft = false", "tags has 'x'", "tags has all ('a')",
                           "date >= 2024-01-01", "date = '2024-01-01'", "date < \"2024-01-01T10:00Z\"",
                           "author.team.id in (1, 2)", "sent > 2024-01-01T00:00Z", "not (dept = 'x' or year = 1)"}) {
    EXPECT_EQ(check_error(fine), "") << fine;
  }
  EXPECT_EQ(check_error("department = 'hr'"), "no document of this collection has the field 'department'");
  EXPECT_EQ(check_error("dept = 'hr' and (year = 1 or colour = 'red')"),
            "no document of this collection has the field 'colour'");
  EXPECT_EQ(check_error("year = \"2024\""), "'year' holds numbers, not a string like \"2024\"");
  EXPECT_EQ(check_error("dept = 5"), "'dept' holds strings, not a number like 5");
  EXPECT_EQ(check_error("dept in ('hr', true)"), "'dept' holds strings, not true or false like true");
  EXPECT_EQ(check_error("draft = 'no'"), "'draft' holds true/false, not a string like \"no\"");
  EXPECT_EQ(check_error("tags >= 2"), "'tags' holds lists of strings: '>=' on it needs numbers or dates, not 2");
  EXPECT_EQ(check_error("tags = 'policy'"), "'tags' holds lists of strings: use 'has' to look into a list");
  EXPECT_EQ(check_error("dept has 'hr'"), "'dept' holds strings: 'has' looks into lists of strings");
  EXPECT_EQ(check_error("dept > 'a'"), "'dept' holds strings: '>' compares numbers or dates, not a string like \"a\"");
  EXPECT_EQ(check_error("year > 2024-01-01"), "'year' holds numbers: '>' on it needs a number, not 2024-01-01");
  EXPECT_EQ(check_error("date = 'yesterday'"), "'date' holds dates, not a string like \"yesterday\"");
  EXPECT_EQ(check_error("date > 5"), "'date' holds dates: '>' on it needs a date, not 5");
  EXPECT_EQ(check_error("author = 'x'"), "'author' holds objects: name one of their keys ('author.KEY')");

  // A field of several kinds takes a literal of any of them.
  FieldSummary mixed = summary();
  mixed.add(DocumentMetadata::from_json({{"year", "unknown"}}));
  EXPECT_EQ(check_error("year = 'unknown'", mixed), "");
  EXPECT_EQ(check_error("year >= 2024", mixed), "");
  EXPECT_EQ(check_error("year = true", mixed), "'year' holds strings and numbers, not true or false like true");

  // A document taken out takes its fields with it.
  FieldSummary fields = summary();
  fields.remove(DocumentMetadata::from_json(kHr));
  EXPECT_EQ(check_error("score > 1", fields), "no document of this collection has the field 'score'");
  EXPECT_EQ(check_error("year > 1", fields), "");
  fields.remove(DocumentMetadata::from_json(kLegal));
  EXPECT_EQ(check_error("year > 1", fields), "no document of this collection has the field 'year'");
}

TEST(MetadataFilter, DocumentMetadataParsesOnce) {
  const auto metadata = DocumentMetadata::from_text(
      R"({"a": {"b": {"c": "2024-05-06"}}, "list": ["y", "x", "y"], "n": null, "mixed": [1, "a"]})");
  const MetadataValue* c = metadata.find("a.b.c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->kind, ValueKind::date);
  EXPECT_EQ(c->text, "2024-05-06");
  const MetadataValue* list = metadata.find("list");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->kind, ValueKind::string_list);
  EXPECT_EQ(list->items, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(metadata.find("n")->kind, ValueKind::other);
  EXPECT_EQ(metadata.find("mixed")->kind, ValueKind::other);
  EXPECT_EQ(metadata.find("a"), nullptr);
  EXPECT_EQ(metadata.objects(), (std::vector<std::string>{"a", "a.b"}));
  EXPECT_TRUE(DocumentMetadata::from_text("not json").fields().empty());
  EXPECT_TRUE(DocumentMetadata::from_text("[1, 2]").fields().empty());
}

}  // namespace
}  // namespace kotae::store
