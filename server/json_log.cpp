#include "server/json_log.h"

#include <chrono>
#include <cstdio>

namespace kotae::server {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void log_event(std::string_view event, nlohmann::json fields) {
  nlohmann::json line{{"event", event}, {"time", unix_seconds()}};
  line.update(fields);
  // One fputs per line: lines from several threads never interleave.
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fputs(text.c_str(), stderr);
}

}  // namespace kotae::server
