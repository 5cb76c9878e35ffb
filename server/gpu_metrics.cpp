#include "server/gpu_metrics.h"

#include <optional>
#include <string>

#include "core/metrics_snapshot.h"

namespace kotae::server {
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
  MetricsSnapshot out;
  for (const auto& family : kFamilies) {
    for (const auto& gpu : gpus) {
      if (const auto& value = gpu.*family.value) {
        out.gauge(family.name, family.help, *value,
                  {{"gpu", std::to_string(gpu.index)}, {"name", gpu.name}, {"uuid", gpu.uuid}});
      }
    }
  }
  return out.text();
}

}  // namespace kotae::server
