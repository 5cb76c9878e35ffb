#pragma once
// What each NVIDIA GPU is doing now, from NVML (libnvidia-ml.so.1, opened at run time like the driver
// in gpu_devices): utilisation, memory in use and temperature, for /metrics. Without NVML or a GPU
// there is nothing to sample, which is the normal case.

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kotae {

struct GpuSample {
  int index = 0;  // NVML's
  std::string name;
  std::string uuid;
  std::optional<double> utilization;  // 0..1: share of the last sample period a kernel ran; none under MIG
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> temperature_celsius;
};

class GpuTelemetry {
 public:
  // Null where NVML cannot be opened or lists no GPU.
  static std::unique_ptr<GpuTelemetry> open();
  ~GpuTelemetry();
  GpuTelemetry(const GpuTelemetry&) = delete;
  GpuTelemetry& operator=(const GpuTelemetry&) = delete;

  // One sample per GPU; a reading NVML refuses (not supported, GPU lost) is left empty.
  std::vector<GpuSample> sample() const;

 private:
  struct Nvml;
  explicit GpuTelemetry(std::unique_ptr<Nvml> nvml);
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace kotae
