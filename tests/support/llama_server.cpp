#include "llama_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace kotae::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

}  // namespace

int listen_on_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free port
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

int free_port() {
  int port = 0;
  const int fd = listen_on_loopback(port);
  if (fd >= 0) ::close(fd);
  return port;
}

fs::path llama_server_binary(const char* configured) {
  if (const char* path = std::getenv("KOTAE_LLAMA_SERVER")) return path;
  return configured;
}

LlamaServer::LlamaServer(const fs::path& binary, const fs::path& model, std::vector<std::string> extra_args,
                         const fs::path& log_file)
    : log_(log_file) {
  // Another process may take the free port before the server binds it; a new port then helps.
  for (int tries = 0; tries < 3; ++tries) {
    error_ = start(binary, model, extra_args);
    if (error_.empty() || pid_ > 0) break;
  }
}

LlamaServer::~LlamaServer() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) std::this_thread::sleep_for(50ms);
  if (::kill(pid_, 0) == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void LlamaServer::kill_now() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string LlamaServer::log_tail() const {
  std::ifstream in(log_);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.substr(text.size() > 3000 ? text.size() - 3000 : 0);
}

bool LlamaServer::healthy() const {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port_));
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send_all(fd, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")) {
    char buffer[64] = {};
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) > 0 && ::recv(fd, buffer, sizeof buffer - 1, 0) > 0) {
      ok = std::string_view(buffer).starts_with("HTTP/1.1 200");
    }
  }
  ::close(fd);
  return ok;
}

std::string LlamaServer::start(const fs::path& binary, const fs::path& model,
                               const std::vector<std::string>& extra_args) {
  if (!fs::exists(binary)) return "llama-server not found at " + binary.string() + ": run scripts/setup";
  port_ = free_port();
  std::vector<std::string> args = {binary.string(), "-m",     model.string(),        "--host",
                                   "127.0.0.1",     "--port", std::to_string(port_), "--no-webui"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ < 0) return "fork failed";
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphaned server when the test binary dies
    const int out = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const auto start = Clock::now();
  while (Clock::now() - start < 60s) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return "llama-server exited during start-up:\n" + log_tail();
    }
    if (healthy()) return {};
    std::this_thread::sleep_for(100ms);
  }
  return "llama-server did not become healthy within 60 s:\n" + log_tail();
}

}  // namespace kotae::testing
