#include "queue/redis_connection.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <optional>

namespace kotae::queue {

namespace {

RedisReply copy(const redisReply* reply) {
  RedisReply out;
  switch (reply->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::string;
      out.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::integer;
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::array;
      for (std::size_t i = 0; i < reply->elements; ++i) out.elements.push_back(copy(reply->element[i]));
      break;
    default: break;  // nil
  }
  return out;
}

std::optional<int> parse_number(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Result<RedisAddress> parse_redis_url(std::string_view url) {
  auto bad = [&] {
    std::string message = "not a Redis URL (redis://HOST[:PORT][/DB] or unix:///SOCKET): ";
    message += redacted_redis_url(url);
    return make_error(ErrorCode::invalid_argument, message);
  };
  RedisAddress address;
  if (url.starts_with("unix://")) {
    std::string_view rest = url.substr(7);
    if (const auto query = rest.find("?db="); query != std::string_view::npos) {
      const auto db = parse_number(rest.substr(query + 4));
      if (!db) return bad();
      address.database = *db;
      rest = rest.substr(0, query);
    }
    if (rest.empty() || rest[0] != '/') return bad();
    address.socket = std::string(rest);
    return address;
  }
  if (!url.starts_with("redis://")) return bad();
  std::string_view rest = url.substr(8);
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user_info = rest.substr(0, at);
    if (const auto colon = user_info.find(':'); colon != std::string_view::npos)
      user_info = user_info.substr(colon + 1);
    address.password = std::string(user_info);
    rest = rest.substr(at + 1);
  }
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    if (slash + 1 < rest.size()) {
      const auto db = parse_number(rest.substr(slash + 1));
      if (!db) return bad();
      address.database = *db;
    }
    rest = rest.substr(0, slash);
  }
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    const auto port = parse_number(rest.substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) return bad();
    address.port = *port;
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad();
  address.host = std::string(rest);
  return address;
}

std::string redacted_redis_url(std::string_view url) {
  std::string text(url);
  if (text.starts_with("redis://")) {
    const std::size_t at = text.rfind('@');
    if (at != std::string::npos && at > 8) text.replace(8, at - 8, "***");
  }
  return text;
}

Result<std::unique_ptr<RedisConnection>> RedisConnection::connect(const std::string& url,
                                                                  std::chrono::milliseconds timeout) {
  const RedisAddress address = KOTAE_TRY_VALUE(parse_redis_url(url));
  const timeval limit{static_cast<time_t>(timeout.count() / 1000),
                      static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  redisContext* context = address.socket.empty() ? redisConnectWithTimeout(address.host.c_str(), address.port, limit)
                                                 : redisConnectUnixWithTimeout(address.socket.c_str(), limit);
  if (context == nullptr) return make_error(ErrorCode::internal, "hiredis could not allocate a connection");
  const std::string server = redacted_redis_url(url);
  if (context->err != 0) {
    const std::string why = context->errstr;
    redisFree(context);
    return make_error(ErrorCode::unavailable, "Redis at " + server + " cannot be reached: " + why);
  }
  redisSetTimeout(context, limit);
  std::unique_ptr<RedisConnection> connection(new RedisConnection(context, server));
  if (!address.password.empty()) KOTAE_TRY(connection->command({"AUTH", address.password}));
  if (address.database != 0) KOTAE_TRY(connection->command({"SELECT", std::to_string(address.database)}));
  return connection;
}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

Result<RedisReply> RedisConnection::reply_of(void* raw, const std::string& command) {
  auto* reply = static_cast<redisReply*>(raw);
  if (reply == nullptr) {
    broken_ = true;
    return make_error(ErrorCode::unavailable, "Redis at " + server_ + ": " + context_->errstr);
  }
  std::unique_ptr<redisReply, void (*)(void*)> owned(reply, freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string message(reply->str, reply->len);
    const bool retry =
        message.starts_with("LOADING") || message.starts_with("BUSY ") || message.starts_with("TRYAGAIN");
    return make_error(retry ? ErrorCode::unavailable : ErrorCode::invalid_argument,
                      "Redis at " + server_ + " refused " + command + ": " + message);
  }
  return copy(reply);
}

Result<RedisReply> RedisConnection::command(const std::vector<std::string>& arguments) {
  auto replies = KOTAE_TRY_VALUE(pipeline({arguments}));
  return std::move(replies.front());
}

Result<std::vector<RedisReply>> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (broken_) return make_error(ErrorCode::unavailable, "the connection to Redis at " + server_ + " was lost");
  for (const auto& arguments : commands) {
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
    for (const auto& argument : arguments) {
      pointers.push_back(argument.data());
      lengths.push_back(argument.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(arguments.size()), pointers.data(), lengths.data()) !=
        REDIS_OK) {
      broken_ = true;
      return make_error(ErrorCode::unavailable, "Redis at " + server_ + ": " + context_->errstr);
    }
  }
  // Every reply is read, even after an error one, so the connection stays in step.
  std::vector<RedisReply> replies;
  std::optional<Error> first_error;
  for (const auto& arguments : commands) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK) raw = nullptr;
    auto reply = reply_of(raw, arguments.front());
    if (!reply) {
      if (!first_error) first_error = reply.error();
      if (broken_) break;
      continue;
    }
    replies.push_back(std::move(*reply));
  }
  if (first_error) return *first_error;
  return replies;
}

}  // namespace kotae::queue
