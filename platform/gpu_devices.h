#pragma once
// NVIDIA GPUs seen through the CUDA driver, loaded at run time so that Kotae runs where CUDA is not
// installed. No GPU is a normal answer: present=false with the reason in `note`.

#include <cstddef>
#include <string>
#include <vector>

namespace kotae {

struct GpuDevice {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  double memory_bandwidth_gb_s = 0;  // theoretical: 2 x memory clock x bus width
};

struct GpuReport {
  bool present = false;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  std::vector<GpuDevice> devices;
  std::string note;
};

GpuReport probe_gpus();

}  // namespace kotae
