#include "queue/work_queue.h"

#include <algorithm>
#include <chrono>

namespace kotae::queue {

namespace {

const char* band_name(Priority priority) { return priority == Priority::interactive ? "interactive" : "bulk"; }

// A stream entry ([id, [field, value, ...]]) as a QueueEntry.
QueueEntry read_entry(const std::string& stream, const RedisReply& entry) {
  QueueEntry out;
  out.stream = stream;
  if (entry.elements.size() < 2) return out;
  out.id = entry.elements[0].text;
  const auto& pairs = entry.elements[1].elements;
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) out.fields[pairs[i].text] = pairs[i + 1].text;
  return out;
}

// The milliseconds since the epoch an entry id ("MS-SEQ") was made at.
std::int64_t id_time_ms(const std::string& id) {
  try {
    return std::stoll(id.substr(0, id.find('-')));
  } catch (...) {
    return 0;
  }
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

WorkQueue::WorkQueue(std::unique_ptr<RedisConnection> connection, WorkQueueOptions options)
    : connection_(std::move(connection)), options_(std::move(options)) {}

std::string WorkQueue::streams_key(Priority priority) const {
  return options_.name + ":streams:" + band_name(priority);
}

Result<std::vector<std::string>> WorkQueue::streams(Priority priority) {
  const RedisReply members = KOTAE_TRY_VALUE(connection_->command({"SMEMBERS", streams_key(priority)}));
  std::vector<std::string> keys;
  for (const auto& member : members.elements) keys.push_back(member.text);
  std::sort(keys.begin(), keys.end());
  return keys;
}

Result<std::string> WorkQueue::enqueue(Priority priority, const std::string& tenant, const Fields& fields) {
  const std::string stream = options_.name + ":" + band_name(priority) + ":" + tenant;
  if (!created_.contains(stream)) {
    auto created = connection_->command({"XGROUP", "CREATE", stream, options_.group, "0", "MKSTREAM"});
    if (!created && created.error().message.find("BUSYGROUP") == std::string::npos) return created.error();
    KOTAE_TRY(connection_->command({"SADD", streams_key(priority), stream}));
    created_.insert(stream);
  }
  std::vector<std::string> arguments{"XADD", stream, "*"};
  for (const auto& [field, value] : fields) {
    arguments.push_back(field);
    arguments.push_back(value);
  }
  return KOTAE_TRY_VALUE(connection_->command(arguments)).text;
}

Result<void> WorkQueue::count_attempts(std::vector<QueueEntry>& entries) {
  if (entries.empty()) return {};
  std::vector<std::vector<std::string>> queries;
  for (const auto& entry : entries) queries.push_back({"XPENDING", entry.stream, options_.group, entry.id, entry.id, "1"});
  const auto replies = KOTAE_TRY_VALUE(connection_->pipeline(queries));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // [[id, consumer, idle ms, deliveries]]
    const auto& rows = replies[i].elements;
    entries[i].attempts = !rows.empty() && rows[0].elements.size() >= 4 ? rows[0].elements[3].integer : 1;
  }
  return {};
}

Result<std::vector<QueueEntry>> WorkQueue::take(const std::string& consumer) {
  for (const Priority band : {Priority::interactive, Priority::bulk}) {
    const std::vector<std::string> keys = KOTAE_TRY_VALUE(streams(band));
    if (keys.empty()) continue;
    // One entry from each tenant's stream: the band's tenants take turns.
    std::vector<std::string> arguments{"XREADGROUP", "GROUP", options_.group, consumer, "COUNT", "1", "STREAMS"};
    arguments.insert(arguments.end(), keys.begin(), keys.end());
    arguments.insert(arguments.end(), keys.size(), ">");
    const RedisReply reply = KOTAE_TRY_VALUE(connection_->command(arguments));
    std::vector<QueueEntry> taken;
    for (const auto& stream : reply.elements) {
      if (stream.elements.size() < 2) continue;
      for (const auto& entry : stream.elements[1].elements) taken.push_back(read_entry(stream.elements[0].text, entry));
    }
    if (!taken.empty()) {
      KOTAE_TRY(count_attempts(taken));
      return taken;
    }
  }
  return std::vector<QueueEntry>();
}

Result<std::vector<QueueEntry>> WorkQueue::claim_abandoned(const std::string& consumer, std::size_t count) {
  std::vector<QueueEntry> claimed;
  for (const Priority band : {Priority::interactive, Priority::bulk}) {
    for (const std::string& stream : KOTAE_TRY_VALUE(streams(band))) {
      if (claimed.size() >= count) break;
      const RedisReply reply = KOTAE_TRY_VALUE(connection_->command(
          {"XAUTOCLAIM", stream, options_.group, consumer, std::to_string(options_.claim_idle.count()), "0", "COUNT",
           std::to_string(count - claimed.size())}));
      if (reply.elements.size() < 2) continue;
      for (const auto& entry : reply.elements[1].elements) {
        if (entry.elements.size() < 2 || entry.elements[1].is_nil()) continue;  // deleted meanwhile
        claimed.push_back(read_entry(stream, entry));
      }
    }
  }
  KOTAE_TRY(count_attempts(claimed));
  return claimed;
}

Result<void> WorkQueue::acknowledge(const QueueEntry& entry) {
  KOTAE_TRY(connection_->pipeline({{"XACK", entry.stream, options_.group, entry.id}, {"XDEL", entry.stream, entry.id}}));
  return {};
}

Result<void> WorkQueue::dead_letter(const QueueEntry& entry, const std::string& reason) {
  std::vector<std::string> arguments{"XADD", dead_key(), "*", "stream", entry.stream, "id", entry.id,
                                     "attempts", std::to_string(entry.attempts), "reason", reason};
  for (const auto& [field, value] : entry.fields) {
    arguments.push_back("field:" + field);
    arguments.push_back(value);
  }
  KOTAE_TRY(connection_->command(arguments));
  return acknowledge(entry);
}

Result<std::vector<Fields>> WorkQueue::dead_letters(std::size_t count) {
  const RedisReply reply =
      KOTAE_TRY_VALUE(connection_->command({"XRANGE", dead_key(), "-", "+", "COUNT", std::to_string(count)}));
  std::vector<Fields> letters;
  for (const auto& entry : reply.elements) letters.push_back(read_entry(dead_key(), entry).fields);
  return letters;
}

Result<QueueStats> WorkQueue::stats() {
  QueueStats total;
  const std::int64_t now = now_ms();
  for (const Priority band : {Priority::interactive, Priority::bulk}) {
    for (const std::string& stream : KOTAE_TRY_VALUE(streams(band))) {
      StreamStats s;
      s.stream = stream;
      const std::int64_t length = KOTAE_TRY_VALUE(connection_->command({"XLEN", stream})).integer;
      const RedisReply pending = KOTAE_TRY_VALUE(connection_->command({"XPENDING", stream, options_.group}));
      s.pending = pending.elements.empty() ? 0 : pending.elements[0].integer;
      s.waiting = std::max<std::int64_t>(0, length - s.pending);
      const RedisReply oldest = KOTAE_TRY_VALUE(connection_->command({"XRANGE", stream, "-", "+", "COUNT", "1"}));
      if (!oldest.elements.empty()) {
        s.oldest_age_s = std::max<double>(0, static_cast<double>(now - id_time_ms(oldest.elements[0].elements[0].text)) / 1000);
      }
      total.waiting += s.waiting;
      total.pending += s.pending;
      total.oldest_age_s = std::max(total.oldest_age_s, s.oldest_age_s);
      total.streams.push_back(std::move(s));
    }
  }
  total.dead_letters = KOTAE_TRY_VALUE(connection_->command({"XLEN", dead_key()})).integer;
  return total;
}

}  // namespace kotae::queue
