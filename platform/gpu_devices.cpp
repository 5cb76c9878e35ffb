#include "platform/gpu_devices.h"

#include "platform/nvml.h"

namespace kotae {
namespace {

// The few CUDA driver API entry points used here; CUresult 0 is success.
using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceTotalMem = int (*)(std::size_t*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDeviceGetPciBusId = int (*)(char*, int, int);

enum Attribute {
  kMultiprocessorCount = 16,
  kMemoryClockRateKHz = 36,
  kGlobalMemoryBusWidthBits = 37,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
};

// NVML's entry points used here (platform/nvml.h).
using nvml::symbol;
using NvmlDevice = nvml::Device;
using NvmlMemory = nvml::Memory;
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlHandleByPciBusId = int (*)(const char*, NvmlDevice*);
using NvmlGetMigMode = int (*)(NvmlDevice, unsigned*, unsigned*);
using NvmlGetMaxMigDeviceCount = int (*)(NvmlDevice, unsigned*);
using NvmlGetMigDeviceHandleByIndex = int (*)(NvmlDevice, unsigned, NvmlDevice*);
using NvmlGetName = int (*)(NvmlDevice, char*, unsigned);
using NvmlGetMemoryInfo = int (*)(NvmlDevice, NvmlMemory*);
using NvmlGetMaxClockInfo = int (*)(NvmlDevice, int, unsigned*);
using NvmlGetMemoryBusWidth = int (*)(NvmlDevice, unsigned*);
constexpr int kNvmlClockMem = 2;

// MIG slices and, where the driver API reports no memory clock (CUDA 13 deprecates it), the
// bandwidth from NVML's maximum memory clock and bus width.
void add_nvml_details(std::vector<GpuDevice>& devices) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) return;
  auto init = symbol<NvmlInit>(nvml, "nvmlInit_v2");
  auto shutdown = symbol<NvmlShutdown>(nvml, "nvmlShutdown");
  auto by_bus = symbol<NvmlHandleByPciBusId>(nvml, "nvmlDeviceGetHandleByPciBusId_v2");
  auto mig_mode = symbol<NvmlGetMigMode>(nvml, "nvmlDeviceGetMigMode");
  auto mig_count = symbol<NvmlGetMaxMigDeviceCount>(nvml, "nvmlDeviceGetMaxMigDeviceCount");
  auto mig_handle = symbol<NvmlGetMigDeviceHandleByIndex>(nvml, "nvmlDeviceGetMigDeviceHandleByIndex");
  auto name_of = symbol<NvmlGetName>(nvml, "nvmlDeviceGetName");
  auto memory_of = symbol<NvmlGetMemoryInfo>(nvml, "nvmlDeviceGetMemoryInfo");
  auto max_clock = symbol<NvmlGetMaxClockInfo>(nvml, "nvmlDeviceGetMaxClockInfo");
  auto bus_width = symbol<NvmlGetMemoryBusWidth>(nvml, "nvmlDeviceGetMemoryBusWidth");
  if (!init || !shutdown || !by_bus || init() != 0) {
    dlclose(nvml);
    return;
  }
  for (auto& d : devices) {
    NvmlDevice handle = nullptr;
    if (d.pci_bus_id.empty() || by_bus(d.pci_bus_id.c_str(), &handle) != 0) continue;
    unsigned current = 0, pending = 0;
    if (mig_mode && mig_mode(handle, &current, &pending) == 0) d.mig_enabled = current == 1;
    unsigned slots = 0;
    if (d.mig_enabled && mig_count && mig_handle && mig_count(handle, &slots) == 0) {
      for (unsigned i = 0; i < slots; ++i) {
        NvmlDevice mig = nullptr;
        if (mig_handle(handle, i, &mig) != 0) continue;  // an empty slot
        MigInstance instance;
        char name[96] = {};
        if (name_of && name_of(mig, name, sizeof name) == 0) instance.name = name;
        NvmlMemory memory{};
        if (memory_of && memory_of(mig, &memory) == 0) instance.memory_bytes = memory.total;
        d.mig_instances.push_back(std::move(instance));
      }
    }
    unsigned clock_mhz = 0, bits = 0;
    if (d.memory_bandwidth_gb_s <= 0 && max_clock && bus_width && max_clock(handle, kNvmlClockMem, &clock_mhz) == 0 &&
        bus_width(handle, &bits) == 0) {
      d.memory_bandwidth_gb_s = 2.0 * clock_mhz * 1e6 * (bits / 8.0) / 1e9;
    }
  }
  shutdown();
  dlclose(nvml);
}

}  // namespace

GpuReport probe_gpus() {
  GpuReport report;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda) {
    report.note = "no NVIDIA driver (libcuda.so.1 not found)";
    return report;
  }
  auto init = symbol<CuInit>(cuda, "cuInit");
  auto driver_version = symbol<CuDriverGetVersion>(cuda, "cuDriverGetVersion");
  auto device_count = symbol<CuDeviceGetCount>(cuda, "cuDeviceGetCount");
  auto device_get = symbol<CuDeviceGet>(cuda, "cuDeviceGet");
  auto device_name = symbol<CuDeviceGetName>(cuda, "cuDeviceGetName");
  auto total_mem = symbol<CuDeviceTotalMem>(cuda, "cuDeviceTotalMem_v2");
  auto attribute = symbol<CuDeviceGetAttribute>(cuda, "cuDeviceGetAttribute");
  auto pci_bus_id = symbol<CuDeviceGetPciBusId>(cuda, "cuDeviceGetPCIBusId");
  if (!init || !driver_version || !device_count || !device_get || !device_name || !total_mem || !attribute) {
    report.note = "libcuda.so.1 lacks the expected driver API";
    dlclose(cuda);
    return report;
  }
  int count = 0;
  if (const int rc = init(0); rc != 0) {
    report.note = "cuInit failed with CUDA error " + std::to_string(rc) + " (driver present, no usable GPU)";
  } else if (device_count(&count) == 0) {
    driver_version(&report.driver_version);
    for (int i = 0; i < count; ++i) {
      int handle = 0;
      if (device_get(&handle, i) != 0) continue;
      GpuDevice d;
      d.index = i;
      char name[256] = {};
      device_name(name, sizeof name, handle);
      d.name = name;
      char bus[32] = {};
      if (pci_bus_id && pci_bus_id(bus, sizeof bus, handle) == 0) d.pci_bus_id = bus;
      total_mem(&d.memory_bytes, handle);
      attribute(&d.compute_major, kComputeCapabilityMajor, handle);
      attribute(&d.compute_minor, kComputeCapabilityMinor, handle);
      attribute(&d.multiprocessors, kMultiprocessorCount, handle);
      int clock_khz = 0, bus_bits = 0;
      attribute(&clock_khz, kMemoryClockRateKHz, handle);
      attribute(&bus_bits, kGlobalMemoryBusWidthBits, handle);
      d.memory_bandwidth_gb_s = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
      report.devices.push_back(std::move(d));
    }
  }
  report.present = !report.devices.empty();
  if (!report.present && report.note.empty()) report.note = "NVIDIA driver found, but no GPU";
  dlclose(cuda);
  if (report.present) add_nvml_details(report.devices);
  return report;
}

PrecisionAdvice advise_precision(int compute_major, int compute_minor) {
  PrecisionAdvice advice;
  const int cc = compute_major * 10 + compute_minor;
  advice.fp16 = cc >= 70;
  advice.int8 = cc >= 75;
  if (advice.fp16) advice.recommended = "fp16";
  advice.reason = advice.int8   ? "tensor cores for FP16 and INT8 (compute capability 7.5 or later)"
                  : advice.fp16 ? "tensor cores for FP16 (compute capability 7.0); no INT8 tensor cores"
                                : "no tensor cores (compute capability below 7.0): FP32";
  return advice;
}

}  // namespace kotae
