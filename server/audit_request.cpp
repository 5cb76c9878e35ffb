#include "server/audit_request.h"

#include <charconv>
#include <cmath>

namespace kotae::server {
namespace {

template <class T>
T number_query(const HttpRequest& request, const char* name, T fallback, T min, T max) {
  const auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  const std::string& text = it->second;
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= min && value <= max)) {
    throw bad_request(std::string("'") + name + "' must be a number from " + std::to_string(min) + " to " +
                      std::to_string(max));
  }
  return value;
}

std::string short_query(const HttpRequest& request, const char* name) {
  std::string value = request.query_value(name);
  if (value.size() > 300) throw bad_request(std::string("'") + name + "' is longer than 300 bytes");
  return value;
}

}  // namespace

store::AuditQuery read_audit_query(const HttpRequest& request) {
  store::AuditQuery query;
  query.actor = short_query(request, "actor");
  query.action = short_query(request, "action");
  query.outcome = short_query(request, "outcome");
  if (!query.outcome.empty() && query.outcome != "ok" && query.outcome != "denied" && query.outcome != "failed")
    throw bad_request("'outcome' must be ok, denied or failed");
  constexpr double kLatest = 1e11;  // year 5138: past any real time, short of float trouble
  query.since = number_query(request, "since", 0.0, 0.0, kLatest);
  query.until = number_query(request, "until", 0.0, 0.0, kLatest);
  query.before_seq = number_query<std::int64_t>(request, "before", 0, 0, INT64_MAX);
  query.limit = number_query<std::size_t>(request, "limit", kDefaultAuditListed, 1, kMaxAuditListed);
  return query;
}

}  // namespace kotae::server
