#include "platform/gpu_devices.h"

#include <gtest/gtest.h>

namespace kotae {
namespace {

TEST(PrecisionAdvice, FollowsTheTensorCoreGenerations) {
  const auto pascal = advise_precision(6, 1);
  EXPECT_EQ(pascal.recommended, "fp32");
  EXPECT_FALSE(pascal.fp16);
  EXPECT_FALSE(pascal.int8);
  const auto volta = advise_precision(7, 0);
  EXPECT_EQ(volta.recommended, "fp16");
  EXPECT_FALSE(volta.int8);
  const auto turing = advise_precision(7, 5);
  EXPECT_TRUE(turing.fp16);
  EXPECT_TRUE(turing.int8);
  const auto hopper = advise_precision(9, 0);
  EXPECT_EQ(hopper.recommended, "fp16");
  EXPECT_TRUE(hopper.int8);
  EXPECT_FALSE(hopper.reason.empty());
}

// Runs on any machine: without a GPU the report says why; with one, each device is described.
TEST(GpuProbe, AnswersWithDevicesOrAReason) {
  const GpuReport report = probe_gpus();
  EXPECT_EQ(report.present, !report.devices.empty());
  if (!report.present) {
    EXPECT_FALSE(report.note.empty());
    return;
  }
  for (const auto& d : report.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.compute_major, 0);
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_GT(d.memory_bandwidth_gb_s, 0.0);
    if (!d.mig_enabled) {
      EXPECT_TRUE(d.mig_instances.empty());
    }
  }
}

}  // namespace
}  // namespace kotae
