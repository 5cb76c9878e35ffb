#pragma once
// NVIDIA GPUs seen through the CUDA driver (and NVML for MIG), both loaded at run time so that Kotae
// runs where CUDA is not installed. No GPU is a normal answer: present=false with the reason in `note`.

#include <cstddef>
#include <string>
#include <vector>

namespace kotae {

// A MIG slice of a GPU (Ampere and later, when an administrator partitioned it).
struct MigInstance {
  std::string name;
  std::size_t memory_bytes = 0;
};

struct GpuDevice {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  double memory_bandwidth_gb_s = 0;  // theoretical: 2 x memory clock x bus width
  bool mig_enabled = false;          // NVML's current MIG mode (false where NVML is absent)
  std::vector<MigInstance> mig_instances;
};

struct GpuReport {
  bool present = false;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  std::vector<GpuDevice> devices;
  std::string note;
};

GpuReport probe_gpus();

// Which reduced precisions pay on this device: FP16 from compute capability 7.0 (tensor cores),
// INT8 from 7.5 (INT8 tensor cores).
struct PrecisionAdvice {
  std::string recommended = "fp32";  // "fp16" where it is supported
  bool fp16 = false;
  bool int8 = false;
  std::string reason;
};

PrecisionAdvice advise_precision(int compute_major, int compute_minor);

}  // namespace kotae
