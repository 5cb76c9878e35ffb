#include "platform/cpu_features.h"

#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace kotae {
namespace {

#if defined(__x86_64__) || defined(__i386__)
struct Registers {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Registers cpuid(unsigned leaf, unsigned subleaf = 0) {
  Registers r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

unsigned long long xgetbv0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

bool bit(unsigned value, int index) {
  return (value >> index) & 1u;
}

void read_x86(CpuFeatures& f) {
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  Registers v = cpuid(0);
  f.vendor.assign(reinterpret_cast<const char*>(&v.ebx), 4);
  f.vendor.append(reinterpret_cast<const char*>(&v.edx), 4);
  f.vendor.append(reinterpret_cast<const char*>(&v.ecx), 4);

  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
    for (unsigned leaf = 0x80000002; leaf <= 0x80000004; ++leaf) {
      Registers b = cpuid(leaf);
      for (unsigned word : {b.eax, b.ebx, b.ecx, b.edx}) f.brand.append(reinterpret_cast<const char*>(&word), 4);
    }
    f.brand = f.brand.c_str();  // drop trailing NULs
    const auto first = f.brand.find_first_not_of(' ');
    f.brand = first == std::string::npos ? std::string() : f.brand.substr(first);
  }

  Registers l1 = cpuid(1);
  f.sse42 = bit(l1.ecx, 20);
  f.fma = bit(l1.ecx, 12);
  f.f16c = bit(l1.ecx, 29);
  const bool osxsave = bit(l1.ecx, 27);
  // Wide registers count only when the OS saves them on context switch.
  const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = (xcr0 & 0xe6) == 0xe6;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;
  f.avx = os_avx && bit(l1.ecx, 28);
  f.fma = f.fma && os_avx;
  f.f16c = f.f16c && os_avx;
  if (max_leaf < 7) return;

  Registers l7 = cpuid(7, 0);
  f.avx2 = os_avx && bit(l7.ebx, 5);
  f.avx512f = os_avx512 && bit(l7.ebx, 16);
  f.avx512bw = os_avx512 && bit(l7.ebx, 30);
  f.avx512vl = os_avx512 && bit(l7.ebx, 31);
  f.avx512_vnni = os_avx512 && bit(l7.ecx, 11);
  f.amx_tile = os_amx && bit(l7.edx, 24);
  f.amx_int8 = f.amx_tile && bit(l7.edx, 25);
  f.amx_bf16 = f.amx_tile && bit(l7.edx, 22);
  Registers l7s1 = cpuid(7, 1);
  f.avx_vnni = os_avx && bit(l7s1.eax, 4);
  f.avx512_bf16 = os_avx512 && bit(l7s1.eax, 5);
}
#endif

}  // namespace

std::vector<std::string> CpuFeatures::names() const {
  std::vector<std::string> out;
  auto add = [&](bool present, const char* name) {
    if (present) out.emplace_back(name);
  };
  add(sse42, "sse4.2");
  add(avx, "avx");
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx_vnni, "avx-vnni");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512_vnni, "avx512-vnni");
  add(avx512_bf16, "avx512-bf16");
  add(amx_tile, "amx-tile");
  add(amx_int8, "amx-int8");
  add(amx_bf16, "amx-bf16");
  return out;
}

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  f.logical_cores = std::thread::hardware_concurrency();
#if defined(__x86_64__) || defined(__i386__)
  read_x86(f);
#endif
  return f;
}

}  // namespace kotae
