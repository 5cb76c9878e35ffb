#include "platform/gpu_telemetry.h"

#include "platform/nvml.h"

namespace kotae {
namespace {

// NVML's entry points used here (platform/nvml.h).
using nvml::symbol;
using NvmlDevice = nvml::Device;
using NvmlMemory = nvml::Memory;
struct NvmlUtilization {
  unsigned gpu, memory;  // percent
};
constexpr int kNvmlTemperatureGpu = 0;

}  // namespace

struct GpuTelemetry::Nvml {
  void* library = nullptr;
  int (*shutdown)() = nullptr;
  int (*handle_by_index)(unsigned, NvmlDevice*) = nullptr;
  int (*name)(NvmlDevice, char*, unsigned) = nullptr;
  int (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  int (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  unsigned count = 0;

  ~Nvml() {
    if (shutdown) shutdown();
    if (library) dlclose(library);
  }
};

GpuTelemetry::GpuTelemetry(std::unique_ptr<Nvml> nvml) : nvml_(std::move(nvml)) {}
GpuTelemetry::~GpuTelemetry() = default;

std::unique_ptr<GpuTelemetry> GpuTelemetry::open() {
  auto nvml = std::make_unique<Nvml>();
  nvml->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml->library) return nullptr;
  auto init = symbol<int (*)()>(nvml->library, "nvmlInit_v2");
  auto count = symbol<int (*)(unsigned*)>(nvml->library, "nvmlDeviceGetCount_v2");
  nvml->handle_by_index = symbol<int (*)(unsigned, NvmlDevice*)>(nvml->library, "nvmlDeviceGetHandleByIndex_v2");
  nvml->name = symbol<int (*)(NvmlDevice, char*, unsigned)>(nvml->library, "nvmlDeviceGetName");
  nvml->uuid = symbol<int (*)(NvmlDevice, char*, unsigned)>(nvml->library, "nvmlDeviceGetUUID");
  nvml->utilization = symbol<int (*)(NvmlDevice, NvmlUtilization*)>(nvml->library, "nvmlDeviceGetUtilizationRates");
  nvml->memory = symbol<int (*)(NvmlDevice, NvmlMemory*)>(nvml->library, "nvmlDeviceGetMemoryInfo");
  nvml->temperature = symbol<int (*)(NvmlDevice, int, unsigned*)>(nvml->library, "nvmlDeviceGetTemperature");
  if (!init || !count || !nvml->handle_by_index || !nvml->name || !nvml->uuid || !nvml->utilization || !nvml->memory ||
      !nvml->temperature || init() != 0) {
    return nullptr;
  }
  nvml->shutdown = symbol<int (*)()>(nvml->library, "nvmlShutdown");
  if (count(&nvml->count) != 0 || nvml->count == 0) return nullptr;
  return std::unique_ptr<GpuTelemetry>(new GpuTelemetry(std::move(nvml)));
}

std::vector<GpuSample> GpuTelemetry::sample() const {
  const Nvml& n = *nvml_;
  std::vector<GpuSample> samples;
  for (unsigned i = 0; i < n.count; ++i) {
    NvmlDevice device = nullptr;
    if (n.handle_by_index(i, &device) != 0) continue;
    GpuSample s;
    s.index = static_cast<int>(i);
    char text[96] = {};
    if (n.name(device, text, sizeof text) == 0) s.name = text;
    char uuid[96] = {};
    if (n.uuid(device, uuid, sizeof uuid) == 0) s.uuid = uuid;
    NvmlUtilization busy{};
    if (n.utilization(device, &busy) == 0) s.utilization = busy.gpu / 100.0;
    NvmlMemory memory{};
    if (n.memory(device, &memory) == 0) {
      s.memory_used_bytes = static_cast<double>(memory.used);
      s.memory_total_bytes = static_cast<double>(memory.total);
    }
    unsigned celsius = 0;
    if (n.temperature(device, kNvmlTemperatureGpu, &celsius) == 0) s.temperature_celsius = celsius;
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace kotae
