#include "queue/work_queue.h"

#include <algorithm>
#include <chrono>

namespace kotae::queue {

namespace {

const char* band_name(Priority priority) {
  return priority == Priority::interactive ? "interactive" : "bulk";
}

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
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The streams' entries of an XREADGROUP reply ([[stream, [[id, [field, value, ...]], ...]], ...]).
std::vector<QueueEntry> read_streams(const RedisReply& reply) {
  std::vector<QueueEntry> taken;
  for (const auto& stream : reply.elements) {
    if (stream.elements.size() < 2) continue;
    for (const auto& entry : stream.elements[1].elements) taken.push_back(read_entry(stream.elements[0].text, entry));
  }
  return taken;
}

// XREADGROUP over the streams (KEYS) one at a time until ARGV[3] entries were read: a capped take in one
// round trip. (XREADGROUP over several streams at once cannot be capped in all.)
constexpr const char* kReadSomeScript = R"lua(
local taken = {}
for _, key in ipairs(KEYS) do
  local read = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1, 'STREAMS', key, '>')
  if read then
    table.insert(taken, read[1])
    if #taken >= tonumber(ARGV[3]) then break end
  end
end
return taken
)lua";

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

Result<std::string> WorkQueue::stream_for(Priority priority, const std::string& tenant) {
  std::string stream = options_.name + ":" + band_name(priority) + ":" + tenant;
  if (!created_.contains(stream)) {
    auto created = connection_->command({"XGROUP", "CREATE", stream, options_.group, "0", "MKSTREAM"});
    if (!created && created.error().message.find("BUSYGROUP") == std::string::npos) return created.error();
    KOTAE_TRY(connection_->command({"SADD", streams_key(priority), stream}));
    created_.insert(stream);
  }
  return stream;
}

Result<std::string> WorkQueue::enqueue(Priority priority, const std::string& tenant, const Fields& fields) {
  auto ids = KOTAE_TRY_VALUE(enqueue_all(priority, tenant, {fields}));
  return ids.front();
}

Result<std::vector<std::string>> WorkQueue::enqueue_all(Priority priority, const std::string& tenant,
                                                        const std::vector<Fields>& entries) {
  const std::string stream = KOTAE_TRY_VALUE(stream_for(priority, tenant));
  std::vector<std::vector<std::string>> commands;
  for (const Fields& fields : entries) {
    std::vector<std::string> arguments{"XADD", stream, "*"};
    for (const auto& [field, value] : fields) {
      arguments.push_back(field);
      arguments.push_back(value);
    }
    commands.push_back(std::move(arguments));
  }
  std::vector<std::string> ids;
  for (const RedisReply& reply : KOTAE_TRY_VALUE(connection_->pipeline(commands))) ids.push_back(reply.text);
  return ids;
}

Result<void> WorkQueue::count_attempts(std::vector<QueueEntry>& entries) {
  if (entries.empty()) return {};
  std::vector<std::vector<std::string>> queries;
  for (const auto& entry : entries)
    queries.push_back({"XPENDING", entry.stream, options_.group, entry.id, entry.id, "1"});
  const auto replies = KOTAE_TRY_VALUE(connection_->pipeline(queries));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // [[id, consumer, idle ms, deliveries]]
    const auto& rows = replies[i].elements;
    entries[i].attempts = !rows.empty() && rows[0].elements.size() >= 4 ? rows[0].elements[3].integer : 1;
  }
  return {};
}

Result<std::vector<QueueEntry>> WorkQueue::read_some(std::vector<std::string> keys, const std::string& consumer,
                                                     std::size_t max) {
  std::rotate(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(turn_++ % keys.size()), keys.end());
  std::vector<std::string> arguments{"EVAL", kReadSomeScript, std::to_string(keys.size())};
  arguments.insert(arguments.end(), keys.begin(), keys.end());
  arguments.insert(arguments.end(), {options_.group, consumer, std::to_string(max)});
  auto taken = read_streams(KOTAE_TRY_VALUE(connection_->command(arguments)));
  KOTAE_TRY(count_attempts(taken));
  return taken;
}

Result<std::vector<QueueEntry>> WorkQueue::read_new(const std::vector<std::string>& keys, const std::string& consumer,
                                                    std::chrono::milliseconds block) {
  // One entry from each tenant's stream: the band's tenants take turns.
  std::vector<std::string> arguments{"XREADGROUP", "GROUP", options_.group, consumer, "COUNT", "1"};
  if (block.count() > 0) {
    arguments.push_back("BLOCK");
    arguments.push_back(std::to_string(block.count()));
  }
  arguments.push_back("STREAMS");
  arguments.insert(arguments.end(), keys.begin(), keys.end());
  arguments.insert(arguments.end(), keys.size(), ">");
  auto taken = read_streams(KOTAE_TRY_VALUE(connection_->command(arguments)));
  KOTAE_TRY(count_attempts(taken));
  return taken;
}

Result<std::vector<QueueEntry>> WorkQueue::take(const std::string& consumer, std::chrono::milliseconds block,
                                                std::size_t max) {
  std::vector<std::string> every;
  for (const Priority band : {Priority::interactive, Priority::bulk}) {
    const std::vector<std::string> keys = KOTAE_TRY_VALUE(streams(band));
    if (keys.empty()) continue;
    auto taken = KOTAE_TRY_VALUE(max > 0 && max < keys.size() ? read_some(keys, consumer, max)
                                                              : read_new(keys, consumer, std::chrono::milliseconds(0)));
    if (!taken.empty()) return taken;
    every.insert(every.end(), keys.begin(), keys.end());
  }
  // Nothing waits: wait for the first entry of any stream (a tenant's first stream is seen at the next take).
  if (block.count() == 0 || every.empty()) return std::vector<QueueEntry>();
  return read_new(every, consumer, block);
}

Result<std::vector<QueueEntry>> WorkQueue::claim_abandoned(const std::string& consumer, std::size_t count) {
  constexpr std::int64_t kMaxBackoffShift = 10;
  std::vector<QueueEntry> claimed;
  const std::string min_idle = std::to_string(options_.claim_idle.count());
  for (const Priority band : {Priority::interactive, Priority::bulk}) {
    for (const std::string& stream : KOTAE_TRY_VALUE(streams(band))) {
      if (claimed.size() >= count) break;
      // [[id, consumer, idle ms, deliveries]], the entries idle at least claim_idle
      const RedisReply pending = KOTAE_TRY_VALUE(connection_->command(
          {"XPENDING", stream, options_.group, "IDLE", min_idle, "-", "+", std::to_string(count * 8)}));
      std::vector<std::string> due;
      for (const auto& row : pending.elements) {
        if (row.elements.size() < 4 || claimed.size() + due.size() >= count) continue;
        const std::int64_t attempts = std::max<std::int64_t>(row.elements[3].integer, 1);
        const std::int64_t backoff = options_.claim_idle.count() << std::min(attempts - 1, kMaxBackoffShift);
        if (row.elements[2].integer >= backoff) due.push_back(row.elements[0].text);
      }
      if (due.empty()) continue;
      // XCLAIM checks the idle time again: of two workers claiming at once, one gets each entry.
      std::vector<std::string> arguments{"XCLAIM", stream, options_.group, consumer, min_idle};
      arguments.insert(arguments.end(), due.begin(), due.end());
      const RedisReply reply = KOTAE_TRY_VALUE(connection_->command(arguments));
      for (const auto& entry : reply.elements) {
        if (entry.elements.size() < 2 || entry.elements[1].is_nil()) continue;  // deleted meanwhile
        claimed.push_back(read_entry(stream, entry));
      }
    }
  }
  KOTAE_TRY(count_attempts(claimed));
  return claimed;
}

Result<void> WorkQueue::extend(const std::vector<QueueEntry>& entries, const std::string& consumer) {
  if (entries.empty()) return {};
  std::vector<std::vector<std::string>> commands;
  for (const auto& entry : entries) {
    // JUSTID: the idle time starts again without counting another delivery.
    commands.push_back({"XCLAIM", entry.stream, options_.group, consumer, "0", entry.id, "JUSTID"});
  }
  KOTAE_TRY(connection_->pipeline(commands));
  return {};
}

Result<void> WorkQueue::acknowledge(const QueueEntry& entry) {
  KOTAE_TRY(
      connection_->pipeline({{"XACK", entry.stream, options_.group, entry.id}, {"XDEL", entry.stream, entry.id}}));
  return {};
}

Result<void> WorkQueue::dead_letter(const QueueEntry& entry, const std::string& reason) {
  KOTAE_TRY(write_dead_letter(entry, reason));
  return acknowledge(entry);
}

Result<void> WorkQueue::write_dead_letter(const QueueEntry& entry, const std::string& reason) {
  std::vector<std::string> arguments{
      "XADD",   dead_key(), "*", "stream", entry.stream, "id", entry.id, "attempts", std::to_string(entry.attempts),
      "reason", reason};
  for (const auto& [field, value] : entry.fields) {
    arguments.push_back("field:" + field);
    arguments.push_back(value);
  }
  KOTAE_TRY(connection_->command(arguments));
  return {};
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
      if (s.pending > 0) {
        const RedisReply rows =
            KOTAE_TRY_VALUE(connection_->command({"XPENDING", stream, options_.group, "-", "+", "1000"}));
        for (const auto& row : rows.elements) s.retrying += row.elements.size() >= 4 && row.elements[3].integer > 1;
      }
      if (!oldest.elements.empty()) {
        s.oldest_age_s =
            std::max<double>(0, static_cast<double>(now - id_time_ms(oldest.elements[0].elements[0].text)) / 1000);
      }
      total.waiting += s.waiting;
      total.pending += s.pending;
      total.retrying += s.retrying;
      total.oldest_age_s = std::max(total.oldest_age_s, s.oldest_age_s);
      total.streams.push_back(std::move(s));
    }
  }
  total.dead_letters = KOTAE_TRY_VALUE(connection_->command({"XLEN", dead_key()})).integer;
  return total;
}

}  // namespace kotae::queue
