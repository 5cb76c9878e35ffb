// XLSX (Office Open XML workbook) to text: the zip through ZipArchive, each part through libxml2's
// streaming reader (XmlPart). Sheets come in the workbook's order (xl/workbook.xml, resolved through
// its relationships), each a heading of its name over a Markdown table whose rows keep the sheet's
// numbers. A cell shows its cached value (<v>: what a formula last computed; Kotae never evaluates
// one): shared strings and inline strings as text, booleans as TRUE/FALSE, numbers as the shortest
// decimal that reads back the same, and numbers in a date or time format as ISO dates (the workbook's
// 1900 or 1904 date system). Rows and cells without a value cost nothing, however far apart their
// references are (a million empty rows are a million absent rows).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "text/loaders/document_builder.h"
#include "text/loaders/format_loaders.h"
#include "text/loaders/package_relationships.h"
#include "text/loaders/quiet_libxml.h"
#include "text/loaders/xml_part.h"
#include "text/loaders/zip_archive.h"

namespace kotae::text {
namespace {

constexpr std::string_view kSheet = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
constexpr std::string_view kWorkbook = "xl/workbook.xml";

// The workbook's shared strings (xl/sharedStrings.xml): each <si>'s text, rich runs joined, phonetic
// guides (<rPh>) left out. Their bytes count against the text limit.
Result<std::vector<std::string>> read_shared_strings(ZipArchive& archive, const LoadLimits& limits) {
  std::vector<std::string> strings;
  auto xml = archive.read("xl/sharedStrings.xml");
  if (!xml) return xml.error();
  if (!*xml) return strings;
  XmlPart reader(**xml, "XLSX", "xl/sharedStrings.xml");
  std::uint64_t bytes = 0;
  bool in_text = false;
  bool skip = false;
  while (reader.next(skip)) {
    skip = false;
    const int type = reader.type();
    if (type == XML_READER_TYPE_ELEMENT) {
      if (auto deep = reader.too_deep(limits.max_depth)) return *deep;
      if (reader.is("si", kSheet)) {
        strings.emplace_back();
      } else if (reader.is("rPh", kSheet)) {
        skip = true;
      } else if (reader.is("t", kSheet)) {
        in_text = !strings.empty() && !reader.empty_element();
      }
    } else if (type == XML_READER_TYPE_END_ELEMENT && reader.is("t", kSheet)) {
      in_text = false;
    } else if (in_text && reader.is_text()) {
      bytes += reader.value().size();
      if (bytes > limits.max_text_bytes) {
        return make_error(ErrorCode::invalid_argument,
                          "XLSX shared strings exceed max_text_bytes (" + std::to_string(limits.max_text_bytes) + ")");
      }
      strings.back() += reader.value();
    }
  }
  if (auto error = reader.error(limits.max_depth)) return *error;
  return strings;
}

// Whether a number format shows a date or time: Excel's built-in ids for them, or a format code with
// day, month, year, hour or second letters outside quotes, brackets and escapes.
bool is_date_format(int id, std::string_view code) {
  if ((id >= 14 && id <= 22) || (id >= 45 && id <= 47) || (id >= 27 && id <= 36) || (id >= 50 && id <= 58)) {
    return true;
  }
  bool quoted = false;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (quoted) {
      continue;
    } else if (c == '\\' || c == '_' || c == '*') {
      ++i;  // an escaped or spacing character
    } else if (c == '[') {
      const auto close = code.find(']', i);
      if (close == std::string_view::npos) return false;
      const std::string_view inside = code.substr(i + 1, close - i - 1);
      if (inside == "h" || inside == "hh" || inside == "m" || inside == "mm" || inside == "s" || inside == "ss") {
        return true;  // elapsed time
      }
      i = close;
    } else if (std::string_view("dDmMyYhHsS").find(c) != std::string_view::npos) {
      return true;
    } else if (c == ';') {
      return false;  // the first section decides
    }
  }
  return false;
}

// Per cell style (<c s="N">): whether it shows a date, from xl/styles.xml's cellXfs and numFmts.
Result<std::vector<bool>> read_date_styles(ZipArchive& archive, std::uint32_t max_depth) {
  std::vector<bool> dates;
  auto xml = archive.read("xl/styles.xml");
  if (!xml) return xml.error();
  if (!*xml) return dates;
  XmlPart reader(**xml, "XLSX", "xl/styles.xml");
  std::vector<std::pair<int, std::string>> custom;  // numFmtId, formatCode
  std::vector<int> styles;                          // cellXfs' numFmtIds, in order
  bool in_cell_formats = false;
  while (reader.next()) {
    const int type = reader.type();
    if (type == XML_READER_TYPE_ELEMENT) {
      if (auto deep = reader.too_deep(max_depth)) return *deep;
      if (reader.is("numFmt", kSheet)) {
        custom.emplace_back(std::atoi(reader.attribute("numFmtId").c_str()), reader.attribute("formatCode"));
      } else if (reader.is("cellXfs", kSheet)) {
        in_cell_formats = !reader.empty_element();
      } else if (in_cell_formats && reader.is("xf", kSheet)) {
        styles.push_back(std::atoi(reader.attribute("numFmtId").c_str()));
      }
    } else if (type == XML_READER_TYPE_END_ELEMENT && reader.is("cellXfs", kSheet)) {
      in_cell_formats = false;
    }
  }
  if (auto error = reader.error(max_depth)) return *error;
  for (const int id : styles) {
    std::string_view code;
    for (const auto& [custom_id, custom_code] : custom) {
      if (custom_id == id) code = custom_code;
    }
    dates.push_back(is_date_format(id, code));
  }
  return dates;
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
void civil_from_days(long long z, long long& y, unsigned& m, unsigned& d) {
  z += 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<long long>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

// An Excel serial date as ISO 8601: "2026-12-07", with the time when it has one ("2026-12-07 14:30").
std::string serial_date(double serial, bool date1904) {
  if (!std::isfinite(serial) || serial < 0 || serial > 2958465) return "";  // 9999-12-31
  // 1900 system: serial 25569 is 1970-01-01 (Excel's phantom 1900-02-29 is before every serial we
  // read as a date after 1900-03-01); 1904 system: serial 0 is 1904-01-01.
  const double days = date1904 ? serial - 24107 : serial - 25569;
  long long whole = static_cast<long long>(std::floor(days));
  long long minutes = std::llround((days - static_cast<double>(whole)) * 24 * 60);
  if (minutes == 24 * 60) {
    ++whole;
    minutes = 0;
  }
  long long y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(whole, y, m, d);
  char out[96];  // room for any long long, though the serial's bound keeps them short
  if (minutes == 0) {
    std::snprintf(out, sizeof out, "%04lld-%02u-%02u", y, m, d);
  } else {
    std::snprintf(out, sizeof out, "%04lld-%02u-%02u %02lld:%02lld", y, m, d, minutes / 60, minutes % 60);
  }
  return out;
}

// A cached number as the shortest decimal that reads back the same ("0.1", not "0.10000000000000001").
std::string plain_number(std::string_view value) {
  double number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size()) return std::string(value);
  char out[32];
  const auto written = std::to_chars(out, out + sizeof out, number);
  return std::string(out, written.ptr);
}

// "B12" -> column 2 (1-based) and row 12; 0s for what is absent or malformed.
void parse_reference(std::string_view reference, std::uint32_t& column, std::uint32_t& row) {
  column = 0;
  row = 0;
  std::size_t i = 0;
  for (; i < reference.size() && reference[i] >= 'A' && reference[i] <= 'Z' && column <= kMaxTableColumns; ++i) {
    column = column * 26 + static_cast<std::uint32_t>(reference[i] - 'A' + 1);
  }
  for (; i < reference.size() && reference[i] >= '0' && reference[i] <= '9' && row <= (1u << 24); ++i) {
    row = row * 10 + static_cast<std::uint32_t>(reference[i] - '0');
  }
}

struct Workbook {
  std::vector<std::string> shared_strings;
  std::vector<bool> date_styles;
  bool date1904 = false;
};

// One worksheet part into a table of its rows that hold a value.
class SheetReader {
 public:
  SheetReader(const Workbook& workbook, const LoadLimits& limits, std::uint64_t& text_bytes)
      : workbook_(workbook), limits_(limits), text_bytes_(text_bytes) {}

  Result<void> read(const std::string& xml, const std::string& part, TableRows& table) {
    XmlPart reader(xml, "XLSX", part);
    while (reader.next()) {
      const int type = reader.type();
      if (type == XML_READER_TYPE_ELEMENT) {
        if (auto deep = reader.too_deep(limits_.max_depth)) return *deep;
        if (reader.namespace_uri() != kSheet) continue;
        const std::string_view name = reader.local_name();
        if (name == "row") {
          std::uint32_t ignored = 0, number = 0;
          parse_reference(reader.attribute("r"), ignored, number);
          row_number_ = number != 0 ? number : row_number_ + 1;
          column_ = 0;
          row_.clear();
        } else if (name == "c") {
          start_cell(reader);
          if (reader.empty_element()) end_cell();
        } else if (name == "v" || name == "t") {
          in_value_ = in_cell_ && !reader.empty_element();
        }
      } else if (type == XML_READER_TYPE_END_ELEMENT && reader.namespace_uri() == kSheet) {
        const std::string_view name = reader.local_name();
        if (name == "v" || name == "t") {
          in_value_ = false;
        } else if (name == "c") {
          end_cell();
        } else if (name == "row") {
          if (auto kept = end_row(table); !kept) return kept.error();
        }
      } else if (in_value_ && reader.is_text()) {
        value_ += reader.value();
        if (value_.size() > limits_.max_text_bytes) return too_large();
      }
    }
    if (auto error = reader.error(limits_.max_depth)) return *error;
    return {};
  }

 private:
  void start_cell(const XmlPart& reader) {
    std::uint32_t column = 0, ignored = 0;
    parse_reference(reader.attribute("r"), column, ignored);
    column_ = column != 0 ? column : column_ + 1;
    cell_type_ = reader.attribute("t");
    const int style = std::atoi(reader.attribute("s").c_str());
    date_ = style >= 0 && static_cast<std::size_t>(style) < workbook_.date_styles.size() &&
            workbook_.date_styles[static_cast<std::size_t>(style)];
    value_.clear();
    in_cell_ = true;
  }

  void end_cell() {
    if (!in_cell_) return;
    in_cell_ = false;
    in_value_ = false;
    std::string shown = cell_text();
    if (shown.empty() || column_ == 0 || column_ > kMaxTableColumns) return;
    if (row_.size() < column_) row_.resize(column_);
    row_[column_ - 1] = std::move(shown);
  }

  std::string cell_text() const {
    if (cell_type_ == "s") {
      std::size_t index = 0;
      const auto [end, error] = std::from_chars(value_.data(), value_.data() + value_.size(), index);
      return error == std::errc() && index < workbook_.shared_strings.size() ? workbook_.shared_strings[index] : "";
    }
    if (cell_type_ == "b") return value_ == "1" ? "TRUE" : value_ == "0" ? "FALSE" : value_;
    if (cell_type_ == "str" || cell_type_ == "inlineStr" || cell_type_ == "e" || cell_type_ == "d") return value_;
    if (value_.empty()) return "";
    if (date_) {
      std::string date = serial_date(std::strtod(value_.c_str(), nullptr), workbook_.date1904);
      if (!date.empty()) return date;
    }
    return plain_number(value_);
  }

  Result<void> end_row(TableRows& table) {
    if (row_.empty()) return {};
    for (const auto& cell : row_) text_bytes_ += cell.size() + 3;
    if (text_bytes_ > limits_.max_text_bytes) return too_large();
    if (auto go_on = limits_.stop.check(); !go_on) return go_on.error();
    table.rows.push_back(std::move(row_));
    table.row_numbers.push_back(row_number_);
    row_.clear();
    return {};
  }

  Error too_large() const {
    return make_error(ErrorCode::invalid_argument,
                      "XLSX text exceeds max_text_bytes (" + std::to_string(limits_.max_text_bytes) + ")");
  }

  const Workbook& workbook_;
  const LoadLimits& limits_;
  std::uint64_t& text_bytes_;
  std::uint32_t row_number_ = 0, column_ = 0;
  std::vector<std::string> row_;
  std::string cell_type_, value_;
  bool date_ = false, in_cell_ = false, in_value_ = false;
};

struct Sheet {
  std::string name, part;
};

// The sheets in the workbook's order, and its date system.
Result<std::vector<Sheet>> read_sheets(ZipArchive& archive, const LoadLimits& limits, bool& date1904) {
  auto xml = archive.read_required(kWorkbook);
  if (!xml) return xml.error();
  auto relationships = read_relationships(archive, kWorkbook, "XLSX", limits.max_depth);
  if (!relationships) return relationships.error();
  std::vector<Sheet> sheets;
  XmlPart reader(*xml, "XLSX", kWorkbook);
  while (reader.next()) {
    if (reader.type() != XML_READER_TYPE_ELEMENT) continue;
    if (auto deep = reader.too_deep(limits.max_depth)) return *deep;
    if (reader.is("workbookPr", kSheet)) {
      const std::string flag = reader.attribute("date1904");
      date1904 = flag == "1" || flag == "true";
    }
    if (!reader.is("sheet", kSheet)) continue;
    const auto found = relationships->find(reader.attribute("id", kRelationshipIds));
    if (found == relationships->end() || found->second.type != "worksheet") continue;  // chart sheets have no cells
    if (sheets.size() == limits.max_pages) {
      return limit_error("XLSX has more sheets than allowed", "max_pages", limits.max_pages);
    }
    sheets.push_back({reader.attribute("name"), found->second.target});
  }
  if (auto error = reader.error(limits.max_depth)) return *error;
  return sheets;
}

}  // namespace

Result<Document> load_xlsx(std::string_view bytes, const LoadLimits& limits) {
  auto archive = ZipArchive::open(bytes, "XLSX", limits.max_decompressed_bytes);
  if (!archive) return archive.error();
  QuietLibxml quiet;
  Workbook workbook;
  auto sheets = read_sheets(*archive, limits, workbook.date1904);
  if (!sheets) return sheets.error();
  auto strings = read_shared_strings(*archive, limits);
  if (!strings) return strings.error();
  workbook.shared_strings = std::move(*strings);
  auto dates = read_date_styles(*archive, limits.max_depth);
  if (!dates) return dates.error();
  workbook.date_styles = std::move(*dates);

  DocumentBuilder builder(limits.max_text_bytes, limits.stop);
  std::uint64_t text_bytes = 0;
  for (const Sheet& sheet : *sheets) {
    if (builder.stopped()) break;
    auto xml = archive->read(sheet.part);
    if (!xml) return xml.error();
    if (!*xml) return make_error(ErrorCode::corrupt, "corrupt XLSX: the sheet " + sheet.part + " is missing");
    TableRows table;
    table.name = sheet.name;
    SheetReader reader(workbook, limits, text_bytes);
    if (auto read = reader.read(**xml, sheet.part, table); !read) return read.error();
    if (table.rows.empty()) continue;
    builder.close_headings();
    builder.add_heading(1, sheet.name);
    builder.add_table(table);
  }

  auto core = archive->read("docProps/core.xml");
  if (!core) return core.error();
  const CoreProperties properties =
      *core ? read_core_properties(**core, "XLSX", "docProps/core.xml") : CoreProperties{};
  auto document = std::move(builder).finish("xlsx", properties.title, 0);
  if (document) add_core_properties(properties, document->metadata);
  return document;
}

}  // namespace kotae::text
