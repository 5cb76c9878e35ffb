#include "core/result.h"

namespace kotae {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::already_exists: return "already_exists";
    case ErrorCode::io: return "io";
    case ErrorCode::corrupt: return "corrupt";
    case ErrorCode::model: return "model";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::overloaded: return "overloaded";
    case ErrorCode::stopped: return "stopped";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

}  // namespace kotae
