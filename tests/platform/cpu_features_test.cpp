#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "platform/cpu_features.h"
#include "platform/gpu_devices.h"

namespace kotae {
namespace {

TEST(CpuFeatures, ReportsAConsistentFeatureSet) {
  const CpuFeatures cpu = detect_cpu_features();
  EXPECT_EQ(cpu.logical_cores, std::thread::hardware_concurrency());
#if defined(__x86_64__)
  EXPECT_FALSE(cpu.vendor.empty());
  // Wider extensions imply the narrower ones they build on.
  EXPECT_TRUE(!cpu.avx2 || cpu.avx);
  EXPECT_TRUE(!cpu.avx512bw || cpu.avx512f);
  EXPECT_TRUE(!cpu.avx512f || cpu.avx2);
  const auto names = cpu.names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "avx2"), cpu.avx2 ? 1 : 0);
  // This build runs ONNX Runtime's x86-64 library, which needs SSE4.2 at least.
  EXPECT_TRUE(cpu.sse42);
#endif
}

TEST(GpuDevices, AbsenceIsAnAnswerNotAFailure) {
  const GpuReport report = probe_gpus();
  EXPECT_EQ(report.present, !report.devices.empty());
  EXPECT_TRUE(report.present || !report.note.empty());
  for (const auto& d : report.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0u);
  }
}

}  // namespace
}  // namespace kotae
