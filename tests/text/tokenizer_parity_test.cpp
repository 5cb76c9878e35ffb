// Our WordPiece tokenizer against Hugging Face `tokenizers` on the same tokenizer.json: ids, type ids
// and offsets must be equal for every documentation text, edge case and code-point sweep text, alone
// and in pairs, at every max_length the reference holds. The reference is written by
// tests/parity/make_tokenizer_reference.py (a CTest fixture) into the build tree.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "support/test_data.h"
#include "text/bert_normalizer.h"
#include "text/unicode.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae::text {
namespace {

using Offsets = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

std::filesystem::path reference_file() {
  if (const char* dir = std::getenv("KOTAE_PARITY_REFERENCE_DIR"); dir && *dir) {
    return std::filesystem::path(dir) / "tokenizer.jsonl";
  }
  return std::filesystem::path(KOTAE_PARITY_REFERENCE_DIR) / "tokenizer.jsonl";
}

std::filesystem::path tokenizer_file() {
  return testing::model_dir("all-minilm-l6-v2") / "tokenizer.json";
}

// The reference records of one kind ("header", "single", "pair", "normalize"); the others are skipped
// unparsed, since every test runs in a process of its own.
std::vector<nlohmann::json> read_reference(const std::string& kind) {
  std::ifstream in(reference_file());
  EXPECT_TRUE(in) << "no reference at " << reference_file() << ": run the ParityFixture tests (ctest does)";
  const std::string prefix = "{\"kind\":\"" + kind + "\"";
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, prefix.size(), prefix) == 0) records.push_back(nlohmann::json::parse(line));
  }
  return records;
}

const WordPieceTokenizer& tokenizer() {
  static const WordPieceTokenizer instance = [] {
    auto loaded = WordPieceTokenizer::from_tokenizer_json(tokenizer_file());
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return std::move(*loaded);
  }();
  return instance;
}

// Python counts code points; we count bytes. A byte offset inside a code point maps to a value no
// reference holds, so it shows up as a difference instead of being rounded away.
class CodePointIndex {
 public:
  explicit CodePointIndex(const std::string& text) : index_(text.size() + 1, kInside) {
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) index_[i] = count++;
    }
    index_[text.size()] = count;
  }
  std::uint32_t operator()(std::uint32_t byte) const { return byte < index_.size() ? index_[byte] : kInside; }

 private:
  static constexpr std::uint32_t kInside = 0xFFFFFFFF;
  std::vector<std::uint32_t> index_;
};

Offsets offsets_of(const nlohmann::json& j) {
  Offsets out;
  out.reserve(j.size());
  for (const auto& o : j) out.emplace_back(o[0].get<std::uint32_t>(), o[1].get<std::uint32_t>());
  return out;
}

std::string printable(std::string_view s, std::size_t limit = 160) {
  std::string out;
  std::size_t pos = 0;
  while (pos < s.size() && out.size() < limit) {
    const std::size_t start = pos;
    const char32_t c = decode_utf8(s, pos);
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) {
      char buffer[12];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(c));
      out += buffer;
    } else {
      out.append(s.substr(start, pos - start));
    }
  }
  if (pos < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string to_string(std::int32_t v) {
  return std::to_string(v);
}
std::string to_string(const std::pair<std::uint32_t, std::uint32_t>& v) {
  std::ostringstream out;
  out << "(" << v.first << "," << v.second << ")";
  return out.str();
}

// "field: sizes, then both sides around the first difference"; empty when equal.
template <class T>
std::string difference(const char* field, const std::vector<T>& expected, const std::vector<T>& got) {
  if (expected == got) return {};
  std::size_t first = 0;
  while (first < expected.size() && first < got.size() && expected[first] == got[first]) ++first;
  const std::size_t from = first > 4 ? first - 4 : 0;
  auto window = [&](const std::vector<T>& v) {
    std::string s = from > 0 ? "... " : "";
    for (std::size_t i = from; i < v.size() && i < first + 8; ++i) s += to_string(v[i]) + " ";
    return s + (first + 8 < v.size() ? "..." : "");
  };
  std::ostringstream out;
  out << "  " << field << " differ at token " << first << " (expected " << expected.size() << " tokens, got "
      << got.size() << ")\n    expected: " << window(expected) << "\n    got:      " << window(got) << "\n";
  return out.str();
}

// Compares every encoding of every record; prints the first ten differences and how many there were.
struct Comparison {
  std::size_t cases = 0, failures = 0;
  std::ostringstream report;

  void check(const nlohmann::json& record, std::size_t max_length, const nlohmann::json& expected, const Encoding& got,
             const std::string& text, const std::string& text_pair) {
    ++cases;
    const CodePointIndex first(text), second(text_pair);
    Offsets got_offsets;
    for (std::size_t i = 0; i < got.size(); ++i) {
      // Offsets of the second text's tokens count from the start of that text.
      const CodePointIndex& in = got.type_ids[i] == 1 ? second : first;
      got_offsets.emplace_back(in(got.offsets[i].first), in(got.offsets[i].second));
    }
    const std::string diff =
        difference("ids", expected["ids"].get<std::vector<std::int32_t>>(), got.ids) +
        difference("type_ids", expected["type_ids"].get<std::vector<std::int32_t>>(), got.type_ids) +
        difference("offsets", offsets_of(expected["offsets"]), got_offsets);
    if (diff.empty()) return;
    if (++failures <= 10) {
      report << "[" << record["kind"].get<std::string>() << " " << record["source"].get<std::string>()
             << " max_length=" << max_length << "] text=\"" << printable(text) << "\"";
      if (record.contains("text_pair")) report << " text_pair=\"" << printable(text_pair) << "\"";
      report << "\n" << diff;
    }
  }
};

TEST(TokenizerParity, ReferenceWasMadeFromThisTokenizer) {
  const auto header = read_reference("header");
  ASSERT_EQ(header.size(), 1u);
  auto sha = sha256_file(tokenizer_file());
  ASSERT_TRUE(sha.ok()) << sha.error().message;
  EXPECT_EQ(header[0]["tokenizer_sha256"].get<std::string>(), *sha)
      << "the reference was made from " << header[0]["tokenizer_json"] << ", not " << tokenizer_file();
  std::cout << "reference: tokenizers " << header[0]["tokenizers"].get<std::string>() << ", "
            << header[0]["counts"].dump() << "\n";
}

TEST(TokenizerParity, SingleTextsMatchHuggingFace) {
  const auto records = read_reference("single");
  Comparison comparison;
  std::map<std::string, std::size_t> texts;
  std::size_t truncated = 0;
  for (const auto& record : records) {
    const auto text = record["text"].get<std::string>();
    ++texts[record["source"].get<std::string>()];
    for (const auto& expected : record["encodings"]) {
      for (const std::size_t max_length : expected["max_lengths"].get<std::vector<std::size_t>>()) {
        comparison.check(record, max_length, expected, tokenizer().encode(text, max_length), text, "");
        if (max_length > 0 && expected["ids"].size() == max_length) ++truncated;
      }
    }
  }
  std::cout << "single texts: " << texts["doc"] << " documentation, " << texts["edge"] << " edge cases, "
            << texts["sweep"] << " code-point sweeps; " << comparison.cases << " encodings compared (" << truncated
            << " truncated at 256), " << comparison.failures << " differ\n";
  RecordProperty("documentation_texts", static_cast<int>(texts["doc"]));
  RecordProperty("encodings_compared", static_cast<int>(comparison.cases));
  RecordProperty("differences", static_cast<int>(comparison.failures));
  EXPECT_GE(texts["doc"], 20000u);
  EXPECT_GE(texts["edge"], 300u);
  EXPECT_GE(texts["sweep"], 2000u);
  EXPECT_GE(truncated, 200u);
  EXPECT_EQ(comparison.failures, 0u) << comparison.failures << " of " << comparison.cases
                                     << " single-text encodings differ; the first ones:\n"
                                     << comparison.report.str();
}

TEST(TokenizerParity, PairsMatchHuggingFace) {
  const auto records = read_reference("pair");
  Comparison comparison;
  std::map<std::size_t, std::size_t> truncated;  // by max_length
  for (const auto& record : records) {
    const auto a = record["text"].get<std::string>(), b = record["text_pair"].get<std::string>();
    for (const auto& expected : record["encodings"]) {
      for (const std::size_t max_length : expected["max_lengths"].get<std::vector<std::size_t>>()) {
        comparison.check(record, max_length, expected, tokenizer().encode_pair(a, b, max_length), a, b);
        if (max_length > 0 && expected["ids"].size() == max_length) ++truncated[max_length];
      }
    }
  }
  std::cout << "pairs: " << records.size() << "; " << comparison.cases << " encodings compared, truncated at";
  for (const auto& [max_length, count] : truncated) std::cout << " " << max_length << ": " << count;
  std::cout << "; " << comparison.failures << " differ\n";
  RecordProperty("pairs", static_cast<int>(records.size()));
  RecordProperty("encodings_compared", static_cast<int>(comparison.cases));
  RecordProperty("differences", static_cast<int>(comparison.failures));
  EXPECT_GE(records.size(), 5000u);
  for (const std::size_t max_length : {16, 32, 128, 256}) EXPECT_GE(truncated[max_length], 200u) << max_length;
  EXPECT_EQ(comparison.failures, 0u) << comparison.failures << " of " << comparison.cases
                                     << " pair encodings differ; the first ones:\n"
                                     << comparison.report.str();
}

// The normaliser's whole output, not only what reaches a token: it covers case mappings and marks of
// code points the vocabulary lacks, which the sweep's tokens alone would hide behind [UNK].
TEST(TokenizerParity, NormalizerMatchesHuggingFace) {
  const auto records = read_reference("normalize");
  std::size_t failures = 0;
  std::ostringstream report;
  for (const auto& record : records) {
    const auto text = record["text"].get<std::string>();
    const auto expected = record["normalized"].get<std::string>();
    const NormalizedText normalized = bert_normalize(text, BertNormalizerOptions{});  // tokenizer.json's settings
    std::string got;
    for (const char32_t c : normalized.chars) append_utf8(got, c);
    if (got == expected) continue;
    if (++failures > 10) continue;
    std::size_t first = 0;
    while (first < got.size() && first < expected.size() && got[first] == expected[first]) ++first;
    const std::size_t from = first > 12 ? first - 12 : 0;
    report << "text=\"" << printable(text) << "\"\n  expected: \"" << printable(expected.substr(from), 60)
           << "\"\n  got:      \"" << printable(got.substr(from), 60) << "\"\n";
  }
  std::cout << "normalised texts: " << records.size() << ", " << failures << " differ\n";
  EXPECT_GE(records.size(), 2300u);
  EXPECT_EQ(failures, 0u) << failures << " of " << records.size() << " normalised texts differ; the first ones:\n"
                          << report.str();
}

}  // namespace
}  // namespace kotae::text
