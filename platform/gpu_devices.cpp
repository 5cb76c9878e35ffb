#include "platform/gpu_devices.h"

#include <dlfcn.h>

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

enum Attribute {
  kMultiprocessorCount = 16,
  kMemoryClockRateKHz = 36,
  kGlobalMemoryBusWidthBits = 37,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
};

template <class Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
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
  return report;
}

}  // namespace kotae
