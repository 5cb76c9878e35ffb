#include "support/kotae_server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

namespace kotae::testing {

KotaeServerProcess::KotaeServerProcess(const std::filesystem::path& binary, std::vector<std::string> args,
                                       const std::filesystem::path& log_file)
    : log_(log_file) {
  args.insert(args.begin(), {binary.string(), "serve"});
  bool has_port = false;
  for (const auto& a : args) has_port = has_port || a == "--port";
  if (!has_port) args.insert(args.end(), {"--port", "0"});
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const std::regex listening(R"("event":"listening".*"port":(\d+))"), ready(R"("event":"ready")");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto text = log();
    std::smatch m;
    if (std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
    if (port_ && std::regex_search(text, ready)) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = "kotae serve exited (" + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " + text;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = "kotae serve was not ready within 120 s: " + log();
}

KotaeServerProcess::~KotaeServerProcess() {
  if (pid_ > 0) terminate(10);
}

int KotaeServerProcess::terminate(double seconds) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

std::string KotaeServerProcess::log() const {
  std::ifstream in(log_);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace kotae::testing
