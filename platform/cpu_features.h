#pragma once
// What the CPU can do, read with CPUID (and XGETBV for the OS's support of wide registers): the
// vector extensions the inference kernels pick from.

#include <string>
#include <vector>

namespace kotae {

struct CpuFeatures {
  std::string vendor;
  std::string brand;
  unsigned logical_cores = 0;
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx_vnni = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool amx_tile = false;
  bool amx_int8 = false;
  bool amx_bf16 = false;

  // Names of the features present, e.g. {"sse4.2", "avx2", "fma"}.
  std::vector<std::string> names() const;
};

CpuFeatures detect_cpu_features();

}  // namespace kotae
