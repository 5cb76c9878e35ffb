#pragma once
// The process's log: one JSON object per line on stderr, {"time": ISO-8601 UTC, "level", "event",
// fields...}, so a log shipper reads it without patterns. The libraries Kotae runs (ONNX Runtime,
// llama.cpp) log through it too. Lines below the level set (--log-level) are not written.

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kotae {

enum class LogLevel { debug, info, warn, error };

void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);
// "debug", "info", "warn" (or "warning"), "error"; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view name);

// Writes {"time", "level", "event": event, ...fields}; `fields` must be an object. One write per
// line: lines from several threads never interleave.
void log_event(std::string_view event, nlohmann::json fields, LogLevel level = LogLevel::info);
// The same at level info whatever --log-level says: the lines that say where a server listens and
// when it is ready or stopped, which scripts and supervisors wait for.
void log_lifecycle(std::string_view event, nlohmann::json fields);
// A third-party library's message: {"event": "library", "source": source, "message": message}.
void log_library(LogLevel level, std::string_view source, std::string_view message);

// Seconds since the epoch (records' timestamps), and the same instant as "2026-12-06T02:42:02.123Z".
double unix_seconds();
std::string iso8601_utc(double unix_seconds);

}  // namespace kotae
