#include "cli/report_error.h"

#include <cstdio>

#include "core/log.h"

namespace kotae::cli {

namespace {
bool json_errors = false;
}  // namespace

void report_errors_as_log_lines() {
  json_errors = true;
}

int report_error(const Error& error) {
  if (json_errors) {
    log_event("failed", {{"error", error.message}}, LogLevel::error);
  } else {
    std::fprintf(stderr, "kotae: %s\n", error.message.c_str());
  }
  switch (error.code) {
    case ErrorCode::invalid_argument:
    case ErrorCode::not_found:
    case ErrorCode::already_exists:
    case ErrorCode::unsupported: return 2;
    default: return 3;
  }
}

}  // namespace kotae::cli
