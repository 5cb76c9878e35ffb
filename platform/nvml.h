#pragma once
// The parts of NVML (libnvidia-ml.so.1, shipped with the driver) that gpu_devices and gpu_telemetry
// read, declared here because Kotae opens the library at run time (dlopen) and links nothing of
// NVIDIA's. nvmlReturn_t 0 is success, 6 "not found".

#include <dlfcn.h>

namespace kotae::nvml {

using Device = void*;
struct Memory {
  unsigned long long total, free, used;
};

// symbol<Fn>(library, name): the entry point `name` of an opened library, or null.
template <class Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace kotae::nvml
