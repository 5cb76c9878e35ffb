#include "core/log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace kotae {
namespace {

std::atomic<int> minimum_level{static_cast<int>(LogLevel::info)};

const char* name_of(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
  }
  return "info";
}

void write_line(std::string_view event, nlohmann::json fields, LogLevel level) {
  nlohmann::json line{{"time", iso8601_utc(unix_seconds())}, {"level", name_of(level)}, {"event", event}};
  line.update(fields);
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fputs(text.c_str(), stderr);
}

}  // namespace

void set_log_level(LogLevel level) {
  minimum_level.store(static_cast<int>(level));
}
bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= minimum_level.load(std::memory_order_relaxed);
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::debug;
  if (name == "info") return LogLevel::info;
  if (name == "warn" || name == "warning") return LogLevel::warn;
  if (name == "error") return LogLevel::error;
  return std::nullopt;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso8601_utc(double seconds) {
  const auto whole = static_cast<std::time_t>(std::floor(seconds));
  const int millis = std::clamp(static_cast<int>((seconds - std::floor(seconds)) * 1000), 0, 999);
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[64];  // room for any int the compiler can imagine in each field
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

void log_event(std::string_view event, nlohmann::json fields, LogLevel level) {
  if (log_enabled(level)) write_line(event, std::move(fields), level);
}

void log_lifecycle(std::string_view event, nlohmann::json fields) {
  write_line(event, std::move(fields), LogLevel::info);
}

void log_library(LogLevel level, std::string_view source, std::string_view message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == ' '))
    message.remove_suffix(1);
  if (message.empty()) return;
  log_event("library", {{"source", source}, {"message", message}}, level);
}

}  // namespace kotae
