#pragma once
// A thin RAII layer over hiredis for the work queue: one connection, commands as argument lists
// (binary safe: file bytes go in as they are), replies copied into a small value type, and Redis's
// failures mapped onto Kotae's error codes (a server that cannot be reached, or went away, is
// `unavailable`). hiredis stays in queue/.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct redisContext;

namespace kotae::queue {

// One reply: a string (bulk or status), an integer, nil, or an array of replies.
struct RedisReply {
  enum class Kind { string, integer, nil, array };
  Kind kind = Kind::nil;
  std::string text;
  std::int64_t integer = 0;
  std::vector<RedisReply> elements;

  bool is_nil() const { return kind == Kind::nil; }
};

// Where a Redis server is: redis://[:PASSWORD@]HOST[:PORT][/DB] or unix:///PATH/TO/SOCKET[?db=N].
struct RedisAddress {
  std::string host;  // empty for a Unix socket
  int port = 6379;
  std::string socket;
  std::string password;
  int database = 0;
};
Result<RedisAddress> parse_redis_url(std::string_view url);
// The URL without its password, for logs and messages.
std::string redacted_redis_url(std::string_view url);

class RedisConnection {
 public:
  static Result<std::unique_ptr<RedisConnection>> connect(const std::string& url,
                                                          std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Runs one command; an error reply is invalid_argument (the command was wrong), except those a
  // retry may cure (LOADING, BUSY, TRYAGAIN), which are unavailable like a lost connection.
  Result<RedisReply> command(const std::vector<std::string>& arguments);
  // Several commands sent at once and their replies read in order: one round trip, and one fsync of
  // the append-only file for all of their writes. The first error reply fails the whole call (the
  // commands before it ran).
  Result<std::vector<RedisReply>> pipeline(const std::vector<std::vector<std::string>>& commands);
  // After a lost connection every command fails: the caller connects again.
  bool broken() const { return broken_; }
  const std::string& server() const { return server_; }

 private:
  RedisConnection(redisContext* context, std::string server) : context_(context), server_(std::move(server)) {}
  Result<RedisReply> reply_of(void* reply, const std::string& command);
  redisContext* context_ = nullptr;
  std::string server_;
  bool broken_ = false;
};

}  // namespace kotae::queue
