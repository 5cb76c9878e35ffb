#pragma once
// A real `kotae serve` for tests: started with the given arguments on a port the kernel chooses
// (--port 0; the port is read from its "listening" log line), waited on until its models are ready,
// stopped with SIGTERM (then SIGKILL) when the object goes.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kotae::testing {

class KotaeServerProcess {
 public:
  KotaeServerProcess(const std::filesystem::path& binary, std::vector<std::string> args,
                     const std::filesystem::path& log_file);
  ~KotaeServerProcess();
  KotaeServerProcess(const KotaeServerProcess&) = delete;
  KotaeServerProcess& operator=(const KotaeServerProcess&) = delete;

  const std::string& error() const { return error_; }  // why it is not running
  int port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then waits up to `seconds` for the exit; returns the exit code (-1: killed or timed out).
  int terminate(double seconds = 30);
  std::string log() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path log_;
  std::string error_;
};

}  // namespace kotae::testing
