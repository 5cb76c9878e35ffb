#pragma once
// GET /v1/audit's query: ?actor=&action=&outcome=&since=&until=&before=&limit= (times in unix
// seconds, `before` an event's seq from the previous page). Throws an ApiError naming what is wrong.

#include <cstddef>

#include "server/api_error.h"
#include "server/http_message.h"
#include "store/audit_trail.h"

namespace kotae::server {

inline constexpr std::size_t kDefaultAuditListed = 100, kMaxAuditListed = 1000;

// Everything but the tenant, which is the caller's.
store::AuditQuery read_audit_query(const HttpRequest& request);

}  // namespace kotae::server
