#include "store/metadata_filter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

namespace kotae::store {

namespace where_language {

constexpr std::size_t kMaxObjectDepth = 8;
constexpr std::size_t kMaxFields = 512;
constexpr std::size_t kMaxListItems = 1024;
constexpr std::int64_t kMicrosPerSecond = 1'000'000;
constexpr std::int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// --- ISO dates ------------------------------------------------------------------------------------

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap(year) ? 29 : kDays[month - 1];
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// `count` digits at `at` as a number; false when they are not all digits.
bool digits(std::string_view text, std::size_t at, std::size_t count, int& value) {
  if (at + count > text.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!is_digit(text[i])) return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

}  // namespace where_language

bool parse_iso_instant(std::string_view text, std::int64_t& instant_us, bool& whole_day) {
  using namespace where_language;
  int year = 0, month = 0, day = 0;
  if (!digits(text, 0, 4, year) || text.size() < 10 || text[4] != '-' || !digits(text, 5, 2, month) || text[7] != '-' ||
      !digits(text, 8, 2, day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return false;
  const std::int64_t midnight =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * kMicrosPerDay;
  if (text.size() == 10) {
    instant_us = midnight;
    whole_day = true;
    return true;
  }
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return false;
  int hour = 0, minute = 0, second = 0;
  if (!digits(text, 11, 2, hour) || text.size() < 16 || text[13] != ':' || !digits(text, 14, 2, minute)) return false;
  std::size_t at = 16;
  if (at < text.size() && text[at] == ':') {
    if (!digits(text, at + 1, 2, second)) return false;
    at += 3;
  }
  if (hour > 23 || minute > 59 || second > 60) return false;  // 60: a leap second, read as the next one
  std::int64_t fraction = 0;
  if (at < text.size() && (text[at] == '.' || text[at] == ',')) {
    std::size_t n = 0;
    std::int64_t scale = 100'000;
    for (++at; at < text.size() && is_digit(text[at]); ++at, ++n) {
      if (n < 6) fraction += (text[at] - '0') * scale;
      scale /= 10;
    }
    if (n == 0 || n > 9) return false;
  }
  std::int64_t offset_minutes = 0;
  if (at < text.size() && text[at] == ' ' && at + 1 < text.size() && (text[at + 1] == '+' || text[at + 1] == '-')) {
    ++at;  // "2024-03-01 10:00 +0100", as the e-mail loader writes dates
  }
  if (at < text.size()) {
    const char sign = text[at];
    if (sign == 'Z' || sign == 'z') {
      ++at;
    } else if (sign == '+' || sign == '-') {
      int oh = 0, om = 0;
      if (!digits(text, at + 1, 2, oh)) return false;
      at += 3;
      if (at < text.size() && text[at] == ':') ++at;
      if (at < text.size()) {
        if (!digits(text, at, 2, om)) return false;
        at += 2;
      }
      if (oh > 23 || om > 59) return false;
      offset_minutes = (sign == '-' ? -1 : 1) * (oh * 60 + om);
    } else {
      return false;
    }
  }
  if (at != text.size()) return false;
  instant_us = midnight + ((hour * 60 + minute - offset_minutes) * 60 + second) * kMicrosPerSecond + fraction;
  whole_day = false;
  return true;
}

// --- documents' metadata --------------------------------------------------------------------------

namespace where_language {

MetadataValue value_of(const nlohmann::json& json) {
  MetadataValue value;
  if (json.is_string()) {
    value.text = json.get<std::string>();
    bool whole_day = false;
    value.kind = parse_iso_instant(value.text, value.instant_us, whole_day) ? ValueKind::date : ValueKind::string;
  } else if (json.is_number()) {
    value.kind = ValueKind::number;
    value.number = json.get<double>();
  } else if (json.is_boolean()) {
    value.kind = ValueKind::boolean;
    value.number = json.get<bool>() ? 1 : 0;
  } else if (json.is_array() && json.size() <= kMaxListItems &&
             std::all_of(json.begin(), json.end(), [](const nlohmann::json& item) { return item.is_string(); })) {
    value.kind = ValueKind::string_list;
    for (const auto& item : json) value.items.push_back(item.get<std::string>());
    std::sort(value.items.begin(), value.items.end());
    value.items.erase(std::unique(value.items.begin(), value.items.end()), value.items.end());
  }
  return value;
}

void flatten(const nlohmann::json& object, const std::string& prefix, std::size_t depth,
             std::map<std::string, MetadataValue, std::less<>>& fields, std::vector<std::string>& objects) {
  for (const auto& [key, json] : object.items()) {
    if (fields.size() + objects.size() >= kMaxFields) return;
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (json.is_object()) {
      if (depth + 1 >= kMaxObjectDepth) continue;
      objects.push_back(path);
      flatten(json, path, depth + 1, fields, objects);
    } else {
      fields.try_emplace(path, value_of(json));
    }
  }
}

}  // namespace where_language

DocumentMetadata DocumentMetadata::from_json(const nlohmann::json& object) {
  DocumentMetadata metadata;
  if (object.is_object()) where_language::flatten(object, "", 0, metadata.fields_, metadata.objects_);
  return metadata;
}

DocumentMetadata DocumentMetadata::from_text(std::string_view json_text) {
  if (json_text.empty()) return {};
  return from_json(nlohmann::json::parse(json_text, nullptr, false, true));
}

const MetadataValue* DocumentMetadata::find(std::string_view path) const {
  const auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : &it->second;
}

// --- the collection's fields ----------------------------------------------------------------------

bool FieldSummary::Kinds::empty() const {
  return objects == 0 && std::all_of(std::begin(counts), std::end(counts), [](std::size_t n) { return n == 0; });
}

std::string FieldSummary::Kinds::describe() const {
  static constexpr const char* kNames[] = {"strings", "numbers",          "true/false",
                                           "dates",   "lists of strings", "other values (null, lists not of strings)"};
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    if (counts[i] > 0) names.emplace_back(kNames[i]);
  }
  if (objects > 0) names.emplace_back("objects");
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

void FieldSummary::add(const DocumentMetadata& metadata) {
  for (const auto& [path, value] : metadata.fields()) ++fields_[path].counts[static_cast<int>(value.kind)];
  for (const auto& path : metadata.objects()) ++fields_[path].objects;
}

void FieldSummary::remove(const DocumentMetadata& metadata) {
  auto drop = [&](const std::string& path, auto&& counter) {
    const auto it = fields_.find(path);
    if (it == fields_.end()) return;
    std::size_t& count = counter(it->second);
    if (count > 0) --count;
    if (it->second.empty()) fields_.erase(it);
  };
  for (const auto& [path, value] : metadata.fields()) {
    drop(path, [kind = static_cast<int>(value.kind)](Kinds& k) -> std::size_t& { return k.counts[kind]; });
  }
  for (const auto& path : metadata.objects()) drop(path, [](Kinds& k) -> std::size_t& { return k.objects; });
}

const FieldSummary::Kinds* FieldSummary::find(std::string_view path) const {
  const auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : &it->second;
}

// --- the expression -------------------------------------------------------------------------------

namespace where_language {

enum class Comparison { eq, ne, lt, le, gt, ge, in, has, has_all, has_any };

const char* spelling(Comparison c) {
  switch (c) {
    case Comparison::eq: return "=";
    case Comparison::ne: return "!=";
    case Comparison::lt: return "<";
    case Comparison::le: return "<=";
    case Comparison::gt: return ">";
    case Comparison::ge: return ">=";
    case Comparison::in: return "in";
    case Comparison::has: return "has";
    case Comparison::has_all: return "has all";
    case Comparison::has_any: return "has any";
  }
  return "?";
}

// A value in the expression. A quoted string that reads as a date may also be compared as one.
struct Literal {
  ValueKind kind = ValueKind::string;   // string, number, boolean or date
  std::string text;                     // string: its text; the others: as written, for messages
  double number = 0;                    // number; boolean: 0 or 1
  bool is_date = false;                 // a date literal, or a string that reads as one
  std::int64_t from_us = 0, to_us = 0;  // the instant (to = from + 1 µs), or the whole day [from, to)
  std::size_t offset = 0;
};

}  // namespace where_language

struct MetadataFilter::Node {
  enum class Kind { all_of, any_of, negation, comparison } kind = Kind::comparison;
  std::vector<std::unique_ptr<Node>> children;
  std::string field;
  std::size_t field_offset = 0;
  where_language::Comparison comparison = where_language::Comparison::eq;
  std::vector<where_language::Literal> values;
};

namespace where_language {

using Node = MetadataFilter::Node;

struct ParseFailure {
  std::size_t offset;
  std::string message;
};

enum class TokenType { end, identifier, string, number, date, open, close, comma, comparison };

struct Token {
  TokenType type = TokenType::end;
  std::size_t offset = 0;
  std::string text;  // identifier, string: the text; others: as written
  Literal literal;   // string, number, date
  Comparison comparison = Comparison::eq;
};

bool identifier_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool identifier_char(char c) {
  return identifier_start(c) || is_digit(c) || c == '.' || c == '-';
}

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void set_date(Literal& literal, std::int64_t instant, bool whole_day) {
  literal.is_date = true;
  literal.from_us = instant;
  literal.to_us = instant + (whole_day ? kMicrosPerDay : 1);
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    for (;;) {
      while (at_ < text_.size() &&
             (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
        ++at_;
      }
      Token token;
      token.offset = at_;
      if (at_ == text_.size()) {
        out.push_back(std::move(token));
        return out;
      }
      const char c = text_[at_];
      if (c == '(' || c == ')' || c == ',') {
        token.type = c == '(' ? TokenType::open : c == ')' ? TokenType::close : TokenType::comma;
        token.text = std::string(1, c);
        ++at_;
      } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        comparison(token);
      } else if (c == '"' || c == '\'') {
        string(token);
      } else if (is_digit(c) || c == '-' || c == '+') {
        number_or_date(token);
      } else if (identifier_start(c)) {
        token.type = TokenType::identifier;
        while (at_ < text_.size() && identifier_char(text_[at_])) ++at_;
        token.text = std::string(text_.substr(token.offset, at_ - token.offset));
      } else {
        throw ParseFailure{at_, "unexpected character '" + printable(c) + "'"};
      }
      out.push_back(std::move(token));
    }
  }

 private:
  static std::string printable(char c) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto byte = static_cast<unsigned char>(c);
      return std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
    }
    return std::string(1, c);
  }

  void comparison(Token& token) {
    token.type = TokenType::comparison;
    const char c = text_[at_];
    const bool equals_next = at_ + 1 < text_.size() && text_[at_ + 1] == '=';
    switch (c) {
      case '=': token.comparison = Comparison::eq; break;
      case '<': token.comparison = equals_next ? Comparison::le : Comparison::lt; break;
      case '>': token.comparison = equals_next ? Comparison::ge : Comparison::gt; break;
      default:
        if (!equals_next) throw ParseFailure{at_, "expected '!=' (not is written 'not')"};
        token.comparison = Comparison::ne;
    }
    at_ += equals_next ? 2 : 1;
    token.text = std::string(text_.substr(token.offset, at_ - token.offset));
  }

  void string(Token& token) {
    const char quote = text_[at_++];
    token.type = TokenType::string;
    std::string value;
    for (;;) {
      if (at_ >= text_.size()) throw ParseFailure{token.offset, "unterminated string"};
      const char c = text_[at_];
      if (c == quote) {
        ++at_;
        break;
      }
      if (c != '\\') {
        value += c;
        ++at_;
        continue;
      }
      if (at_ + 1 >= text_.size()) throw ParseFailure{token.offset, "unterminated string"};
      const char e = text_[at_ + 1];
      switch (e) {
        case '"': value += '"'; break;
        case '\'': value += '\''; break;
        case '\\': value += '\\'; break;
        case '/': value += '/'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(at_ + 2, cp)) throw ParseFailure{at_, "expected four hex digits after \\u"};
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a surrogate pair, as JSON writes one
            std::uint32_t low = 0;
            if (at_ + 7 >= text_.size() || text_[at_ + 6] != '\\' || text_[at_ + 7] != 'u' || !hex4(at_ + 8, low) ||
                low < 0xDC00 || low > 0xDFFF) {
              throw ParseFailure{at_, "a high surrogate \\u escape without its low half"};
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            at_ += 6;
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            throw ParseFailure{at_, "a low surrogate \\u escape alone"};
          }
          append_utf8(value, cp);
          at_ += 4;
          break;
        }
        default: throw ParseFailure{at_, "unknown escape '\\" + printable(e) + "'"};
      }
      at_ += 2;
    }
    token.text = value;
    token.literal.kind = ValueKind::string;
    token.literal.text = std::move(value);
    token.literal.offset = token.offset;
    std::int64_t instant = 0;
    bool whole_day = false;
    if (parse_iso_instant(token.literal.text, instant, whole_day)) set_date(token.literal, instant, whole_day);
  }

  bool hex4(std::size_t at, std::uint32_t& value) const {
    if (at + 4 > text_.size()) return false;
    value = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
      const char c = text_[i];
      const int digit = is_digit(c)              ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
      if (digit < 0) return false;
      value = value * 16 + static_cast<std::uint32_t>(digit);
    }
    return true;
  }

  void number_or_date(Token& token) {
    const std::size_t start = at_;
    int ignored = 0;
    if (digits(text_, at_, 4, ignored) && at_ + 4 < text_.size() && text_[at_ + 4] == '-') {
      // A date: the run of characters a date-time may hold, read as one.
      while (at_ < text_.size() && (is_digit(text_[at_]) || text_[at_] == '-' || text_[at_] == ':' ||
                                    text_[at_] == '.' || text_[at_] == '+' || text_[at_] == 'T' || text_[at_] == 'Z')) {
        ++at_;
      }
      token.type = TokenType::date;
      token.text = std::string(text_.substr(start, at_ - start));
      std::int64_t instant = 0;
      bool whole_day = false;
      if (!parse_iso_instant(token.text, instant, whole_day)) {
        throw ParseFailure{start,
                           "'" + token.text + "' is not an ISO date (2024-01-31) or date-time (2024-01-31T09:30:00Z)"};
      }
      token.literal.kind = ValueKind::date;
      token.literal.text = token.text;
      token.literal.offset = start;
      set_date(token.literal, instant, whole_day);
      return;
    }
    if (text_[at_] == '-' || text_[at_] == '+') ++at_;
    const std::size_t integer = at_;
    while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
    if (at_ == integer) throw ParseFailure{start, "expected a number after '" + std::string(1, text_[start]) + "'"};
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      const std::size_t fraction = at_;
      while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
      if (at_ == fraction) throw ParseFailure{at_, "expected digits after the decimal point"};
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      const std::size_t exponent = at_;
      while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
      if (at_ == exponent) throw ParseFailure{at_, "expected the exponent's digits"};
    }
    if (at_ < text_.size() && identifier_char(text_[at_])) {
      throw ParseFailure{at_, "unexpected character '" + printable(text_[at_]) + "' in a number"};
    }
    token.type = TokenType::number;
    token.text = std::string(text_.substr(start, at_ - start));
    const char* first = token.text.data() + (token.text[0] == '+' ? 1 : 0);
    double value = 0;
    const auto [end, error] = std::from_chars(first, token.text.data() + token.text.size(), value);
    if (error != std::errc() || end != token.text.data() + token.text.size() || !std::isfinite(value)) {
      throw ParseFailure{start, "'" + token.text + "' is not a number this filter can hold"};
    }
    token.literal.kind = ValueKind::number;
    token.literal.number = value;
    token.literal.text = token.text;
    token.literal.offset = start;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

bool is_keyword(const Token& token, std::string_view word) {
  return token.type == TokenType::identifier && token.text.size() == word.size() && lowered(token.text) == word;
}

bool reserved(const Token& token) {
  for (const char* word : {"and", "or", "not", "in", "has", "all", "any", "true", "false"}) {
    if (is_keyword(token, word)) return true;
  }
  return false;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const MetadataFilterLimits& limits) : tokens_(std::move(tokens)), limits_(limits) {}

  std::unique_ptr<Node> run() {
    auto root = disjunction(0);
    if (peek().type != TokenType::end) {
      throw ParseFailure{peek().offset, "expected 'and', 'or' or the end, not " + describe(peek())};
    }
    return root;
  }
  std::size_t terms() const { return terms_; }

 private:
  const Token& peek() const { return tokens_[at_]; }
  const Token& take() { return tokens_[at_ < tokens_.size() - 1 ? at_++ : at_]; }

  static std::string describe(const Token& token) {
    switch (token.type) {
      case TokenType::end: return "the end";
      case TokenType::string: return "a string";
      default: return "'" + (token.text.size() > 40 ? token.text.substr(0, 40) + "..." : token.text) + "'";
    }
  }

  std::unique_ptr<Node> combine(Node::Kind kind, std::unique_ptr<Node> first, std::size_t depth,
                                std::string_view word) {
    if (!is_keyword(peek(), word)) return first;
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->children.push_back(std::move(first));
    while (is_keyword(peek(), word)) {
      take();
      node->children.push_back(kind == Node::Kind::any_of ? conjunction(depth) : unary(depth));
    }
    return node;
  }

  std::unique_ptr<Node> disjunction(std::size_t depth) {
    return combine(Node::Kind::any_of, conjunction(depth), depth, "or");
  }
  std::unique_ptr<Node> conjunction(std::size_t depth) {
    return combine(Node::Kind::all_of, unary(depth), depth, "and");
  }

  void deeper(std::size_t depth, const Token& token) const {
    if (depth + 1 > limits_.max_depth) {
      throw ParseFailure{token.offset,
                         "nested deeper than " + std::to_string(limits_.max_depth) + " (parentheses and 'not's)"};
    }
  }

  std::unique_ptr<Node> unary(std::size_t depth) {
    if (is_keyword(peek(), "not")) {
      deeper(depth, peek());
      take();
      auto node = std::make_unique<Node>();
      node->kind = Node::Kind::negation;
      node->children.push_back(unary(depth + 1));
      return node;
    }
    if (peek().type == TokenType::open) {
      deeper(depth, peek());
      take();
      auto inner = disjunction(depth + 1);
      if (peek().type != TokenType::close) throw ParseFailure{peek().offset, "expected ')', not " + describe(peek())};
      take();
      return inner;
    }
    return comparison();
  }

  std::unique_ptr<Node> comparison() {
    const Token& field = take();
    if (field.type != TokenType::identifier || reserved(field)) {
      throw ParseFailure{field.offset, "expected a field name, not " + describe(field)};
    }
    auto node = std::make_unique<Node>();
    node->field = field.text;
    node->field_offset = field.offset;
    const Token& op = take();
    if (op.type == TokenType::comparison) {
      node->comparison = op.comparison;
      node->values.push_back(value());
    } else if (is_keyword(op, "in")) {
      node->comparison = Comparison::in;
      list(*node);
    } else if (is_keyword(op, "has")) {
      if (is_keyword(peek(), "all") || is_keyword(peek(), "any")) {
        node->comparison = is_keyword(take(), "all") ? Comparison::has_all : Comparison::has_any;
        list(*node);
      } else {
        node->comparison = Comparison::has;
        node->values.push_back(value());
      }
    } else {
      throw ParseFailure{op.offset, "expected a comparison (=, !=, <, <=, >, >=, in, has) after '" + field.text +
                                        "', not " + describe(op)};
    }
    return node;
  }

  void list(Node& node) {
    if (peek().type != TokenType::open) throw ParseFailure{peek().offset, "expected '(' and a list of values"};
    take();
    node.values.push_back(value());
    while (peek().type == TokenType::comma) {
      take();
      node.values.push_back(value());
    }
    if (peek().type != TokenType::close)
      throw ParseFailure{peek().offset, "expected ',' or ')', not " + describe(peek())};
    take();
  }

  Literal value() {
    const Token& token = peek();
    Literal literal;
    if (token.type == TokenType::string || token.type == TokenType::number || token.type == TokenType::date) {
      literal = token.literal;
    } else if (is_keyword(token, "true") || is_keyword(token, "false")) {
      literal.kind = ValueKind::boolean;
      literal.number = is_keyword(token, "true") ? 1 : 0;
      literal.text = literal.number != 0 ? "true" : "false";
      literal.offset = token.offset;
    } else {
      throw ParseFailure{token.offset, "expected a value"};
    }
    if (++terms_ > limits_.max_terms) {
      throw ParseFailure{token.offset, "more than " + std::to_string(limits_.max_terms) + " terms"};
    }
    take();
    return literal;
  }

  std::vector<Token> tokens_;
  std::size_t at_ = 0;
  std::size_t terms_ = 0;
  const MetadataFilterLimits& limits_;
};

// 1 + the characters (UTF-8 code points) before `offset`.
std::size_t column_of(std::string_view text, std::size_t offset) {
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  }
  return column;
}

// --- checking and evaluating ----------------------------------------------------------------------

std::string quoted(const Literal& literal) {
  std::string shown = literal.text.size() > 40 ? literal.text.substr(0, 40) + "..." : literal.text;
  return literal.kind == ValueKind::string ? "\"" + shown + "\"" : shown;
}

const char* kind_name(const Literal& literal) {
  switch (literal.kind) {
    case ValueKind::number: return "a number";
    case ValueKind::boolean: return "true or false";
    case ValueKind::date: return "a date";
    default: return "a string";
  }
}

bool ordering(Comparison c) {
  return c == Comparison::lt || c == Comparison::le || c == Comparison::gt || c == Comparison::ge;
}

// Whether some document's value of these kinds can meet the literal in this comparison; else why not.
std::string mismatch(const Node& node, const Literal& literal, const FieldSummary::Kinds& kinds) {
  const std::string field = "'" + node.field + "' holds " + kinds.describe();
  const bool dates = kinds.count(ValueKind::date) > 0;
  if (node.comparison == Comparison::has || node.comparison == Comparison::has_all ||
      node.comparison == Comparison::has_any) {
    if (kinds.count(ValueKind::string_list) == 0) return field + ": 'has' looks into lists of strings";
    if (literal.kind != ValueKind::string) return field + ", not " + kind_name(literal) + " like " + quoted(literal);
    return "";
  }
  if (ordering(node.comparison)) {
    if (literal.kind == ValueKind::number) {
      return kinds.count(ValueKind::number) > 0
                 ? ""
                 : field + ": '" + spelling(node.comparison) + "' on it needs " +
                       (dates ? "a date" : "numbers or dates") + ", not " + quoted(literal);
    }
    if (literal.is_date) {
      return dates ? ""
                   : field + ": '" + std::string(spelling(node.comparison)) + "' on it needs " +
                         (kinds.count(ValueKind::number) > 0 ? "a number" : "numbers or dates") + ", not " +
                         quoted(literal);
    }
    return field + ": '" + std::string(spelling(node.comparison)) + "' compares numbers or dates, not " +
           kind_name(literal) + " like " + quoted(literal);
  }
  bool fits = false;
  switch (literal.kind) {
    case ValueKind::string: fits = kinds.count(ValueKind::string) > 0 || (dates && literal.is_date); break;
    case ValueKind::number: fits = kinds.count(ValueKind::number) > 0; break;
    case ValueKind::boolean: fits = kinds.count(ValueKind::boolean) > 0; break;
    case ValueKind::date: fits = dates; break;
    default: break;
  }
  if (fits) return "";
  if (kinds.count(ValueKind::string_list) > 0 && literal.kind == ValueKind::string) {
    return field + ": use 'has' to look into a list";
  }
  return field + ", not " + std::string(kind_name(literal)) + " like " + quoted(literal);
}

Result<void> check_node(const Node& node, const FieldSummary& fields) {
  if (node.kind != Node::Kind::comparison) {
    for (const auto& child : node.children) KOTAE_TRY(check_node(*child, fields));
    return {};
  }
  const FieldSummary::Kinds* kinds = fields.find(node.field);
  if (kinds == nullptr) {
    return make_error(ErrorCode::invalid_argument, "no document of this collection has the field '" + node.field + "'");
  }
  if (kinds->objects > 0 &&
      std::all_of(std::begin(kinds->counts), std::end(kinds->counts), [](std::size_t n) { return n == 0; })) {
    return make_error(ErrorCode::invalid_argument,
                      "'" + node.field + "' holds objects: name one of their keys ('" + node.field + ".KEY')");
  }
  for (const Literal& literal : node.values) {
    if (auto why = mismatch(node, literal, *kinds); !why.empty()) return make_error(ErrorCode::invalid_argument, why);
  }
  return {};
}

bool equal(const MetadataValue& value, const Literal& literal) {
  switch (literal.kind) {
    case ValueKind::string:
      if (value.kind == ValueKind::date && literal.is_date) {
        return value.instant_us >= literal.from_us && value.instant_us < literal.to_us;
      }
      return (value.kind == ValueKind::string || value.kind == ValueKind::date) && value.text == literal.text;
    case ValueKind::number: return value.kind == ValueKind::number && value.number == literal.number;
    case ValueKind::boolean: return value.kind == ValueKind::boolean && value.number == literal.number;
    case ValueKind::date:
      return value.kind == ValueKind::date && value.instant_us >= literal.from_us && value.instant_us < literal.to_us;
    default: return false;
  }
}

bool ordered(const MetadataValue& value, Comparison c, const Literal& literal) {
  if (literal.kind == ValueKind::number) {
    if (value.kind != ValueKind::number) return false;
    switch (c) {
      case Comparison::lt: return value.number < literal.number;
      case Comparison::le: return value.number <= literal.number;
      case Comparison::gt: return value.number > literal.number;
      default: return value.number >= literal.number;
    }
  }
  if (!literal.is_date || value.kind != ValueKind::date) return false;
  // A date names its whole day: before it, through it, after it, from it.
  switch (c) {
    case Comparison::lt: return value.instant_us < literal.from_us;
    case Comparison::le: return value.instant_us < literal.to_us;
    case Comparison::gt: return value.instant_us >= literal.to_us;
    default: return value.instant_us >= literal.from_us;
  }
}

bool contains(const MetadataValue& value, const Literal& literal) {
  return value.kind == ValueKind::string_list && literal.kind == ValueKind::string &&
         std::binary_search(value.items.begin(), value.items.end(), literal.text);
}

bool evaluate(const Node& node, const DocumentMetadata& metadata) {
  switch (node.kind) {
    case Node::Kind::all_of:
      return std::all_of(node.children.begin(), node.children.end(),
                         [&](const auto& child) { return evaluate(*child, metadata); });
    case Node::Kind::any_of:
      return std::any_of(node.children.begin(), node.children.end(),
                         [&](const auto& child) { return evaluate(*child, metadata); });
    case Node::Kind::negation: return !evaluate(*node.children[0], metadata);
    case Node::Kind::comparison: break;
  }
  const MetadataValue* value = metadata.find(node.field);
  if (node.comparison == Comparison::ne) return value == nullptr || !equal(*value, node.values[0]);
  if (value == nullptr) return false;
  const auto& values = node.values;
  switch (node.comparison) {
    case Comparison::eq: return equal(*value, values[0]);
    case Comparison::in:
      return std::any_of(values.begin(), values.end(), [&](const Literal& l) { return equal(*value, l); });
    case Comparison::has: return contains(*value, values[0]);
    case Comparison::has_all:
      return std::all_of(values.begin(), values.end(), [&](const Literal& l) { return contains(*value, l); });
    case Comparison::has_any:
      return std::any_of(values.begin(), values.end(), [&](const Literal& l) { return contains(*value, l); });
    default: return ordered(*value, node.comparison, values[0]);
  }
}

}  // namespace where_language

MetadataFilter::MetadataFilter(std::string text, std::unique_ptr<Node> root, std::size_t terms)
    : text_(std::move(text)), root_(std::move(root)), terms_(terms) {}
MetadataFilter::~MetadataFilter() = default;

Result<std::shared_ptr<const MetadataFilter>> MetadataFilter::parse(std::string_view text,
                                                                    const MetadataFilterLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return make_error(ErrorCode::invalid_argument, "the filter is " + std::to_string(text.size()) +
                                                       " bytes, over the limit of " + std::to_string(limits.max_bytes));
  }
  using namespace where_language;
  try {
    Parser parser(Lexer(text).tokens(), limits);
    auto root = parser.run();
    return std::shared_ptr<const MetadataFilter>(
        std::make_shared<MetadataFilter>(std::string(text), std::move(root), parser.terms()));
  } catch (const ParseFailure& failure) {
    return make_error(ErrorCode::invalid_argument,
                      "column " + std::to_string(column_of(text, failure.offset)) + ": " + failure.message);
  }
}

Result<void> MetadataFilter::check(const FieldSummary& fields) const {
  return where_language::check_node(*root_, fields);
}

bool MetadataFilter::matches(const DocumentMetadata& metadata) const {
  return where_language::evaluate(*root_, metadata);
}

}  // namespace kotae::store
