#pragma once
// How a command ends on an error: a message for the person at the terminal (or a log line for the
// servers) and the exit code for the error's kind (README: 2 usage, 3 the work failed).

#include "core/result.h"

namespace kotae::cli {

// Prints "kotae: MESSAGE" to stderr and returns the exit code for the error's kind.
int report_error(const Error& error);
// From now on report_error writes a log line ({"event": "failed", "error": MESSAGE}) instead: the
// servers (serve, worker), whose stderr is JSON lines only.
void report_errors_as_log_lines();

}  // namespace kotae::cli
