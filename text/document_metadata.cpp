#include "text/document_metadata.h"

#include <array>
#include <cctype>
#include <cmath>
#include <optional>

#include "core/json_depth.h"
#include "text/unicode.h"

namespace kotae::text {
namespace {

constexpr std::array<std::string_view, 10> kFilePropertyKeys = {"title", "author", "created", "modified", "from",
                                                                "to",    "cc",     "date",    "subject",  "message_id"};

Error metadata_error(std::string_view what, const std::string& problem) {
  return make_error(ErrorCode::invalid_argument, std::string(what) + ": " + problem);
}

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxMetadataKeyBytes) return false;
  const auto c0 = static_cast<unsigned char>(key[0]);
  if (!std::isalpha(c0) && c0 != '_') return false;
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

std::optional<std::string> string_problem(const std::string& value) {
  if (value.size() > kMaxMetadataStringBytes)
    return "is " + std::to_string(value.size()) + " bytes, over " + std::to_string(kMaxMetadataStringBytes);
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return "holds a control character";
  }
  return std::nullopt;
}

std::optional<std::string> value_problem(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string: return string_problem(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return std::nullopt;
    case nlohmann::json::value_t::number_float:
      if (!std::isfinite(value.get<double>())) return "is not a finite number";
      return std::nullopt;
    case nlohmann::json::value_t::array:
      if (value.size() > kMaxMetadataListItems)
        return "has " + std::to_string(value.size()) + " items, over " + std::to_string(kMaxMetadataListItems);
      for (const auto& item : value) {
        if (!item.is_string()) return "is a list holding something other than strings";
        if (auto problem = string_problem(item.get_ref<const std::string&>())) return "holds a string that " + *problem;
      }
      return std::nullopt;
    case nlohmann::json::value_t::null: return "is null (leave the key out instead)";
    case nlohmann::json::value_t::object: return "is an object (metadata is flat: no nested objects)";
    default: return "is not a string, number, boolean or list of strings";
  }
}

bool all_digits_at(std::string_view s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return false;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}
int number_at(std::string_view s, std::size_t at, std::size_t n) {
  int x = 0;
  for (std::size_t i = at; i < at + n; ++i) x = x * 10 + (s[i] - '0');
  return x;
}
bool plausible_date(int month, int day) {
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}
bool plausible_time(int hour, int minute, int second) {
  return hour <= 23 && minute <= 59 && second <= 60;
}
std::string two_digits(int x) {
  return std::string{static_cast<char>('0' + x / 10), static_cast<char>('0' + x % 10)};
}

}  // namespace

bool is_file_property_key(std::string_view key) {
  for (const auto known : kFilePropertyKeys) {
    if (known == key) return true;
  }
  return false;
}

Result<void> check_metadata(const nlohmann::json& metadata, std::string_view what, std::string_view server_source) {
  if (!metadata.is_object()) return metadata_error(what, "must be a JSON object of keys and values");
  if (metadata.size() > kMaxMetadataKeys) {
    return metadata_error(what,
                          "has " + std::to_string(metadata.size()) + " keys, over " + std::to_string(kMaxMetadataKeys));
  }
  for (const auto& [key, value] : metadata.items()) {
    if (!valid_key(key)) {
      return metadata_error(what, "key '" + valid_utf8(key.substr(0, kMaxMetadataKeyBytes + 1)) +
                                      "' is not a name of 1 to 64 letters, digits, '_', '.' or '-' starting with a "
                                      "letter or '_'");
    }
    if (auto problem = value_problem(value)) return metadata_error(what, "'" + key + "' " + *problem);
    if (key == kSourceKey &&
        (server_source.empty() || !value.is_string() || value.get<std::string>() != server_source)) {
      return metadata_error(what, server_source.empty()
                                      ? std::string("'source' is set by the server, not by a caller")
                                      : "'source' is set by the server ('" + std::string(server_source) + "')");
    }
  }
  const std::size_t bytes = metadata.dump().size();
  if (bytes > kMaxMetadataBytes) {
    return metadata_error(what,
                          "is " + std::to_string(bytes) + " bytes as JSON, over " + std::to_string(kMaxMetadataBytes));
  }
  return {};
}

Result<nlohmann::json> parse_metadata(std::string_view json_text, std::string_view what) {
  if (json_text.size() > kMaxMetadataTextBytes) {
    return metadata_error(
        what, "is " + std::to_string(json_text.size()) + " bytes, over " + std::to_string(kMaxMetadataTextBytes));
  }
  if (nested_deeper_than(json_text, 2)) return metadata_error(what, "nests deeper than an object of lists");
  auto metadata = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded()) return metadata_error(what, "is not valid JSON");
  KOTAE_TRY(check_metadata(metadata, what));
  return metadata;
}

nlohmann::json replace_caller_metadata(const nlohmann::json& stored, const nlohmann::json& given) {
  nlohmann::json result = given.is_object() ? given : nlohmann::json::object();
  if (!stored.is_object()) return result;
  for (const auto& [key, value] : stored.items()) {
    if ((key == kSourceKey || is_file_property_key(key)) && !result.contains(key)) result[key] = value;
  }
  return result;
}

std::string clean_property(std::string_view value) {
  std::string out;
  bool space = false;
  for (std::size_t pos = 0; pos < value.size();) {
    const char32_t c = decode_utf8(value, pos);
    if (is_whitespace(c)) {
      space = !out.empty();
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0xfeff) continue;  // C0, DEL, C1, a byte order mark
    std::string piece;
    if (space) piece += ' ';
    append_utf8(piece, c);
    if (out.size() + piece.size() > kMaxMetadataStringBytes) break;
    out += piece;
    space = false;
  }
  return out;
}

std::string normalise_iso_date(std::string_view s) {
  // YYYY-MM-DD
  if (!all_digits_at(s, 0, 4) || s.size() < 10 || s[4] != '-' || !all_digits_at(s, 5, 2) || s[7] != '-' ||
      !all_digits_at(s, 8, 2))
    return "";
  if (!plausible_date(number_at(s, 5, 2), number_at(s, 8, 2))) return "";
  std::string out(s.substr(0, 10));
  if (s.size() == 10) return out;
  // THH:MM[:SS[.fraction]]
  if ((s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !all_digits_at(s, 11, 2) || s.size() < 16 || s[13] != ':' ||
      !all_digits_at(s, 14, 2))
    return "";
  std::size_t at = 16;
  int second = 0;
  std::string time = "T" + std::string(s.substr(11, 5));
  if (at < s.size() && s[at] == ':') {
    if (!all_digits_at(s, at + 1, 2)) return "";
    second = number_at(s, at + 1, 2);
    time += s.substr(at, 3);
    at += 3;
    if (at < s.size() && (s[at] == '.' || s[at] == ',')) {
      std::size_t end = at + 1;
      while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) && end - at <= 9) ++end;
      if (end == at + 1) return "";
      time += "." + std::string(s.substr(at + 1, end - at - 1));
      at = end;
    }
  } else {
    time += ":00";
  }
  if (!plausible_time(number_at(s, 11, 2), number_at(s, 14, 2), second)) return "";
  out += time;
  // Z, +HH:MM, +HHMM, +HH, or none (local time)
  if (at == s.size()) return out;
  if ((s[at] == 'Z' || s[at] == 'z') && at + 1 == s.size()) return out + "Z";
  if (s[at] != '+' && s[at] != '-') return "";
  if (!all_digits_at(s, at + 1, 2) || number_at(s, at + 1, 2) > 23) return "";
  std::string offset = std::string(1, s[at]) + std::string(s.substr(at + 1, 2)) + ":";
  std::size_t rest = at + 3;
  if (rest < s.size() && s[rest] == ':') ++rest;
  if (rest == s.size()) return out + offset + "00";
  if (!all_digits_at(s, rest, 2) || rest + 2 != s.size() || number_at(s, rest, 2) > 59) return "";
  return out + offset + std::string(s.substr(rest, 2));
}

std::string iso_date_from_pdf(std::string_view s) {
  if (s.starts_with("D:")) s.remove_prefix(2);
  if (!all_digits_at(s, 0, 4)) return "";
  std::size_t at = 4;
  int part[5] = {1, 1, 0, 0, 0};  // month, day, hour, minute, second
  bool timed = false;
  for (int i = 0; i < 5 && all_digits_at(s, at, 2); ++i, at += 2) {
    part[i] = number_at(s, at, 2);
    if (i >= 2) timed = true;
  }
  if (!plausible_date(part[0], part[1]) || !plausible_time(part[2], part[3], part[4])) return "";
  std::string out = std::string(s.substr(0, 4)) + "-" + two_digits(part[0]) + "-" + two_digits(part[1]);
  if (!timed) return out;
  out += "T" + two_digits(part[2]) + ":" + two_digits(part[3]) + ":" + two_digits(part[4]);
  if (at >= s.size()) return out;  // no zone: local time, as written
  if (s[at] == 'Z') return out + "Z";
  if ((s[at] != '+' && s[at] != '-') || !all_digits_at(s, at + 1, 2) || number_at(s, at + 1, 2) > 23) return out;
  std::string offset = std::string(1, s[at]) + std::string(s.substr(at + 1, 2)) + ":";
  at += 3;
  if (at < s.size() && s[at] == '\'') ++at;
  if (all_digits_at(s, at, 2) && number_at(s, at, 2) <= 59) return out + offset + std::string(s.substr(at, 2));
  return out + offset + "00";
}

}  // namespace kotae::text
