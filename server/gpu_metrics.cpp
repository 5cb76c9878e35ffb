#include "server/gpu_metrics.h"

#include <optional>
#include <sstream>

namespace kotae::server {
namespace {

// A label value as the text format wants it: backslash, quote and newline escaped.
std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

}  // namespace

std::string gpu_metrics_text(const std::vector<GpuSample>& gpus) {
  struct Family {
    const char* name;
    const char* help;
    std::optional<double> GpuSample::*value;
  };
  static const Family kFamilies[] = {
      {"kotae_gpu_utilization_ratio", "Share of the last sample period in which a kernel ran on the GPU (NVML)",
       &GpuSample::utilization},
      {"kotae_gpu_memory_used_bytes", "GPU memory in use, by every process (NVML)", &GpuSample::memory_used_bytes},
      {"kotae_gpu_memory_total_bytes", "GPU memory in all (NVML)", &GpuSample::memory_total_bytes},
      {"kotae_gpu_temperature_celsius", "GPU core temperature (NVML)", &GpuSample::temperature_celsius},
  };
  std::ostringstream out;
  out.precision(17);
  for (const auto& family : kFamilies) {
    bool header = false;
    for (const auto& gpu : gpus) {
      const auto& value = gpu.*family.value;
      if (!value) continue;
      if (!header) out << "# HELP " << family.name << " " << family.help << "\n# TYPE " << family.name << " gauge\n";
      header = true;
      out << family.name << "{gpu=\"" << gpu.index << "\",name=\"" << escaped(gpu.name) << "\",uuid=\""
          << escaped(gpu.uuid) << "\"} " << *value << "\n";
    }
  }
  return out.str();
}

}  // namespace kotae::server
