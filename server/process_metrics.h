#pragma once
// The process_* metrics every Prometheus client library exports (CPU time, memory, file descriptors,
// start time), read from /proc at scrape time, in the text format.

#include <string>

namespace kotae::server {

// Empty where /proc cannot be read (not Linux): the rest of /metrics is served regardless.
std::string process_metrics_text();

}  // namespace kotae::server
