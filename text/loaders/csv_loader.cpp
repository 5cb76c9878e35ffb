// CSV and TSV to text: one Markdown table, rows numbered as the file's records (the header is 1).
// Our own reader, because the dialect must be guessed and every byte accounted for: RFC 4180 quoting
// ("" inside quotes, line breaks inside quoted fields), "\r\n" or "\n" records. A TSV is split at
// tabs; a CSV's delimiter is sniffed from its first records: of , ; tab and |, the one that splits
// them into the same number of fields (two or more) most consistently. The first record is the header
// when it looks like one (no empty or numeric cells, and a column below it holds numbers, or its
// cells are all unlike the values below them); else the columns are named "Column 1", "Column 2"....
// Text that is not UTF-8 is read as Latin-1, as plain text is.

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/utf8_text.h"

namespace kotae::text {
namespace {

constexpr std::size_t kSniffedRecords = 50;
constexpr std::size_t kRecordsPerStopCheck = 1024;

// Reads records one at a time; a record's fields are unquoted.
class CsvReader {
 public:
  CsvReader(std::string_view text, char delimiter) : text_(text), delimiter_(delimiter) {}

  bool done() const { return at_ >= text_.size(); }

  // The next record; false when the text has ended. An unclosed quote runs to the end of the text. A
  // record of more than kMaxTableColumns fields comes back with kMaxTableColumns + 1 of them.
  bool next(std::vector<std::string>& fields) {
    fields.clear();
    if (done()) return false;
    std::string field;
    bool quoted = false, was_quoted = false;
    for (; at_ < text_.size(); ++at_) {
      const char c = text_[at_];
      if (quoted) {
        if (c != '"') {
          field += c;
        } else if (at_ + 1 < text_.size() && text_[at_ + 1] == '"') {
          field += '"';
          ++at_;
        } else {
          quoted = false;
        }
      } else if (c == '"' && !was_quoted && std::all_of(field.begin(), field.end(), is_blank)) {
        field.clear();
        quoted = was_quoted = true;
      } else if (c == delimiter_) {
        // Past the widest table, fields are read but not kept: the caller refuses the record.
        if (fields.size() <= kMaxTableColumns) fields.push_back(std::move(field));
        field.clear();
        was_quoted = false;
      } else if (c == '\n' || c == '\r') {
        if (c == '\r' && at_ + 1 < text_.size() && text_[at_ + 1] == '\n') ++at_;
        ++at_;
        break;
      } else {
        field += c;
      }
    }
    fields.push_back(std::move(field));
    return true;
  }

 private:
  static bool is_blank(char c) { return c == ' ' || c == '\t'; }

  std::string_view text_;
  char delimiter_;
  std::size_t at_ = 0;
};

// How consistently `delimiter` splits the first records: the records whose field count is the most
// common one, when that count is two or more (0 otherwise).
std::size_t consistency(std::string_view text, char delimiter) {
  CsvReader reader(text, delimiter);
  std::map<std::size_t, std::size_t> counts;  // fields per record -> records
  std::vector<std::string> fields;
  for (std::size_t n = 0; n < kSniffedRecords && reader.next(fields);) {
    if (fields.size() == 1 && fields[0].empty()) continue;  // blank lines say nothing
    ++counts[fields.size()];
    ++n;
  }
  std::size_t best = 0;
  for (const auto& [fields_per_record, records] : counts) {
    if (fields_per_record >= 2) best = std::max(best, records * 1000 + std::min<std::size_t>(fields_per_record, 999));
  }
  return best;
}

char sniff_delimiter(std::string_view text) {
  char chosen = ',';
  std::size_t best = 0;
  for (const char candidate : {',', ';', '\t', '|'}) {
    if (const std::size_t score = consistency(text, candidate); score > best) {
      best = score;
      chosen = candidate;
    }
  }
  return chosen;
}

bool is_number(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && (s.front() == '-' || s.front() == '+' || s.front() == '$')) s.remove_prefix(1);
  if (!s.empty() && s.back() == '%') s.remove_suffix(1);
  bool digit = false;
  for (const char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (c != '.' && c != ',' && c != 'e' && c != 'E' && c != '-') {
      return false;
    }
  }
  return digit;
}

// Whether the first record names the columns (see the top of this file).
bool has_header(const std::vector<std::vector<std::string>>& records) {
  if (records.size() < 2) return true;
  const auto& first = records[0];
  for (const auto& cell : first) {
    if (cell.find_first_not_of(" \t") == std::string::npos || is_number(cell)) return false;
  }
  bool numbers_below = false, unlike_below = true;
  for (std::size_t c = 0; c < first.size(); ++c) {
    std::size_t numeric = 0, values = 0;
    for (std::size_t r = 1; r < records.size() && r <= kSniffedRecords; ++r) {
      if (c >= records[r].size() || records[r][c].empty()) continue;
      ++values;
      numeric += is_number(records[r][c]);
      if (records[r][c] == first[c]) unlike_below = false;
    }
    if (values > 0 && numeric * 2 > values) numbers_below = true;
  }
  return numbers_below || unlike_below;
}

Result<Document> load_delimited(std::string_view bytes, const LoadLimits& limits, std::string format) {
  const std::string text = decode_text_bytes(bytes);
  const char delimiter = format == "tsv" ? '\t' : sniff_delimiter(text);
  CsvReader reader(text, delimiter);
  TableRows table;
  std::uint64_t text_bytes = 0;
  std::vector<std::string> fields;
  std::uint32_t record = 0;
  while (reader.next(fields)) {
    ++record;
    if (fields.size() > kMaxTableColumns) {
      return make_error(ErrorCode::invalid_argument, "record " + std::to_string(record) + " has more than " +
                                                         std::to_string(kMaxTableColumns) + " fields");
    }
    if (std::all_of(fields.begin(), fields.end(),
                    [](const std::string& f) { return f.find_first_not_of(" \t") == std::string::npos; })) {
      continue;  // a blank line, or only separators
    }
    for (const auto& field : fields) text_bytes += field.size() + 3;
    if (text_bytes > limits.max_text_bytes) {
      return make_error(ErrorCode::invalid_argument,
                        "extracted text exceeds max_text_bytes (" + std::to_string(limits.max_text_bytes) + ")");
    }
    if (record % kRecordsPerStopCheck == 0) {
      if (auto go_on = limits.stop.check(); !go_on) return go_on.error();
    }
    table.rows.push_back(fields);
    table.row_numbers.push_back(record);
  }
  if (!table.rows.empty() && !has_header(table.rows)) {
    std::size_t columns = 0;
    for (const auto& row : table.rows) columns = std::max(columns, row.size());
    std::vector<std::string> names;
    for (std::size_t c = 1; c <= columns; ++c) names.push_back("Column " + std::to_string(c));
    table.rows.insert(table.rows.begin(), std::move(names));
    table.row_numbers.insert(table.row_numbers.begin(), 0);
  }
  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  builder.add_table(table);
  return std::move(builder).finish(std::move(format), "", 0);
}

}  // namespace

Result<Document> load_csv(std::string_view bytes, const LoadLimits& limits) {
  return load_delimited(bytes, limits, "csv");
}

Result<Document> load_tsv(std::string_view bytes, const LoadLimits& limits) {
  return load_delimited(bytes, limits, "tsv");
}

}  // namespace kotae::text
