#pragma once
// A real llama.cpp llama-server for tests: started on a free loopback port with a model, waited on
// until /health answers, stopped (SIGTERM, then SIGKILL) when the object goes. The binary is the one
// scripts/setup builds (CMake's KOTAE_LLAMA_SERVER), or $KOTAE_LLAMA_SERVER.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kotae::testing {

// A listening loopback socket on a port the kernel chose (written to `port`); -1 on failure.
int listen_on_loopback(int& port);
// A port nobody listens on (free a moment ago; the kernel hands out ports in turn, so it stays free).
int free_port();
// Writes all of `bytes` to a socket; false when the peer has gone.
bool send_all(int fd, std::string_view bytes);

class LlamaServer {
 public:
  // Starts `binary` serving `model`; error() says why it is not running.
  LlamaServer(const std::filesystem::path& binary, const std::filesystem::path& model,
              std::vector<std::string> extra_args, const std::filesystem::path& log_file);
  ~LlamaServer();
  LlamaServer(const LlamaServer&) = delete;
  LlamaServer& operator=(const LlamaServer&) = delete;

  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // SIGKILL, now: a server that dies mid-answer (the fault tests).
  void kill_now();

 private:
  std::string start(const std::filesystem::path& binary, const std::filesystem::path& model,
                    const std::vector<std::string>& extra_args);
  bool healthy() const;
  std::string log_tail() const;

  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path log_;
  std::string error_;
};

// The server a test should run: $KOTAE_LLAMA_SERVER, else the path CMake was given.
std::filesystem::path llama_server_binary(const char* configured);

}  // namespace kotae::testing
