#pragma once
// `kotae serve`: the HTTP API (see docs/server.md). Logs are JSON lines on stderr; the first says
// where it listens. SIGTERM or SIGINT shut it down gracefully: stop accepting, let requests in flight
// finish within --shutdown-deadline, save, exit 0.

#include <CLI/CLI.hpp>

#include "app/access_flags.h"
#include "server/kotae_server.h"

namespace kotae::app {

struct ServeOptions {
  server::ServerOptions server;
  OidcFlags oidc;  // with the roles groups give (--group-role), for the proxy's users too
  ProxyFlags proxy;
  std::string openai_key_env = "OPENAI_API_KEY";
  // The reranking service (--rerank-url): its API (empty: from the URL's path) and the variable holding
  // its key (empty: none sent).
  std::string rerank_api;
  std::string rerank_key_env;
  double shutdown_deadline_s = 30;
  double answer_wait_s = 30;     // for an answer worker to start a task (the "workers" back-end)
  double answer_silence_s = 60;  // between a started task's pieces
  bool allow_open = false;       // listen beyond loopback without API keys
  // Public keys whose signature every model's manifest must carry (files or folders, ':'-separated),
  // besides DATA/trusted_keys; the same setting as KOTAE_TRUSTED_KEYS (docs/models.md).
  std::string trusted_keys;
  // Inference knobs the flags give as text, applied to server.models in run_serve.
  std::string precision = "auto";          // auto (static INT8 with VNNI, else FP32), fp32, int8, fp16
  std::string graph_optimization = "all";  // none, basic, extended, all
  long batch_window_us = 2000;
};

// Adds `serve` and its flags to the app. Every flag may also come from an environment variable
// (KOTAE_PORT for --port, ...) or from the [serve] section of the settings file (cli/settings.h): a
// flag wins over both, the environment over the file.
CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);
// The same flags on another command (`kotae config show` shows what they come to).
void add_serve_options(CLI::App& command, ServeOptions& options);
// Every setting checked before anything starts: the models named are installed and of the right
// kind, URLs parse, files can be read. The message names what is wrong and what is there instead.
Result<void> check_serve_settings(const ServeOptions& options);
int run_serve(ServeOptions options);

// `kotae keygen --tenant NAME`: a new API key, and the entry (its hash) for the --api-keys file.
struct KeygenOptions {
  std::string store;  // postgres://… (for every replica) or a folder (its server.db): the key is stored there too
  std::string tenant = "local";
  std::string name;
  bool admin = false;
  std::string role = "admin";  // over its tenant's collections (server/auth/role.h)
  double rate = 0, burst = 0;
  std::uint64_t queued_jobs = 0, stored_bytes = 0, documents = 0;  // its tenant's quota (0: none)
};
int run_keygen(const KeygenOptions& options);

}  // namespace kotae::app
