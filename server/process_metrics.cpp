#include "server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/metrics_snapshot.h"

namespace kotae::server {
namespace {

// The fields of /proc/self/stat after the command name (which may hold spaces), numbered as proc(5)
// numbers them: field 3 is the first.
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields(3);  // 1 and 2 (pid, comm) left empty
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double seconds = 0;
      in >> seconds;
      return seconds;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

}  // namespace

std::string process_metrics_text() {
  const auto f = stat_fields();
  if (f.size() < 25) return "";
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  MetricsSnapshot out;
  out.counter("process_cpu_seconds_total", "User and system CPU time spent in seconds.",
              (std::stod(f[14]) + std::stod(f[15])) / ticks);
  out.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", std::stod(f[23]));
  out.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", std::stod(f[24]) * page);
  out.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
            boot_time() + std::stod(f[22]) / ticks);
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  out.gauge("process_open_fds", "Number of open file descriptors.", fds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    out.gauge("process_max_fds", "Maximum number of open file descriptors.", static_cast<double>(limit.rlim_cur));
  }
  return out.text();
}

}  // namespace kotae::server
