#pragma once
// The server's log: one JSON object per line on stderr ({"event": ..., "time": ..., fields...}), so
// that a log shipper can read it without patterns.

#include <string_view>

#include <nlohmann/json.hpp>

namespace kotae::server {

double unix_seconds();

// Writes {"event": event, "time": now, ...fields} as one line; `fields` must be an object.
void log_event(std::string_view event, nlohmann::json fields);

}  // namespace kotae::server
