#include "cli/serve_command.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli/collection_access.h"
#include "core/sha256.h"
#include "server/api_keys.h"
#include "server/conversation_store.h"

namespace kotae::cli {
namespace {

void log_line(nlohmann::json line) {
  std::fprintf(stderr, "%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stderr);
}

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "::1" || host.starts_with("127."); }

}  // namespace

int run_keygen(const KeygenOptions& options) {
  if (!server::valid_tenant(options.tenant)) {
    return report_error(make_error(ErrorCode::invalid_argument, "--tenant: letters, digits, '_' and '-'"));
  }
  const std::string key = server::random_id("kt_");
  nlohmann::json entry{{"name", options.name.empty() ? options.tenant : options.name}, {"tenant", options.tenant},
                       {"sha256", sha256_hex(key)}};
  if (options.admin) entry["admin"] = true;
  if (options.rate > 0) {
    entry["rate_per_second"] = options.rate;
    entry["burst"] = options.burst > 0 ? options.burst : options.rate;
  }
  std::printf("%s\n", nlohmann::json{{"key", key}, {"entry", entry}}.dump(2).c_str());
  std::fprintf(stderr, "kotae: give the key to its user; add the entry to the \"keys\" list of the --api-keys file "
                       "(the server stores only its hash)\n");
  return 0;
}

int run_serve(ServeOptions options) {
  auto& http = options.server.http;
  if (!is_loopback(http.host) && !options.allow_open && options.server.api_keys_file.empty()) {
    return report_error(make_error(ErrorCode::invalid_argument,
                                   "listening on " + http.host + " would serve anyone who can reach it: give API keys "
                                   "(--api-keys FILE), or pass --allow-open to serve an open API on purpose"));
  }
  if (const char* key = std::getenv(options.openai_key_env.c_str())) options.server.models.backends.openai_api_key = key;

  // Signals are taken by sigwait below, so every thread the server starts must have them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = server::KotaeServer::start(options.server);
  if (!server) return report_error(server.error());
  log_line({{"event", "listening"}, {"host", http.host}, {"port", (*server)->port()}});
  if (auto ready = (*server)->wait_until_ready(); !ready) {
    log_line({{"event", "failed"}, {"error", ready.error().message}});
    (*server)->shutdown(std::chrono::milliseconds(0));
    return report_error(ready.error());
  }
  log_line({{"event", "ready"}, {"port", (*server)->port()}});

  int signal = 0;
  sigwait(&signals, &signal);
  log_line({{"event", "shutting_down"}, {"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  (*server)->shutdown(std::chrono::milliseconds(static_cast<long long>(options.shutdown_deadline_s * 1000)));
  log_line({{"event", "stopped"}});
  return 0;
}

}  // namespace kotae::cli
