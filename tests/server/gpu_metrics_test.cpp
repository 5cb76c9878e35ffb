// The kotae_gpu_* series /metrics shows where NVML lists GPUs: one per GPU and reading, labels escaped,
// a reading NVML refused left out, and the text passes promtool. Fed samples as NVML gives them (no
// GPU here); that none are shown without a GPU is checked against the real server (server_test.cpp).
// And the count of models moved off a failed GPU.
#include "server/gpu_metrics.h"
#include "server/server_metrics.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "support/test_data.h"

namespace kotae::server {
namespace {

std::vector<GpuSample> two_gpus() {
  GpuSample h100;
  h100.index = 0;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.uuid = "GPU-5f1a";
  h100.utilization = 0.37;
  h100.memory_used_bytes = 1073741824;
  h100.memory_total_bytes = 85520809984;
  h100.temperature_celsius = 41;
  GpuSample mig;  // under MIG NVML reports no utilisation
  mig.index = 1;
  mig.name = "A \"quoted\\ name\nwith a newline";
  mig.uuid = "GPU-77";
  mig.memory_used_bytes = 0;
  mig.memory_total_bytes = 42949672960;
  mig.temperature_celsius = 35;
  return {h100, mig};
}

TEST(GpuMetrics, OneSeriesPerGpuAndReading) {
  const std::string text = gpu_metrics_text(two_gpus());
  for (const char* expected : {
           "# TYPE kotae_gpu_utilization_ratio gauge\n",
           "kotae_gpu_utilization_ratio{gpu=\"0\",name=\"NVIDIA H100 80GB HBM3\",uuid=\"GPU-5f1a\"} 0.37\n",
           "kotae_gpu_memory_used_bytes{gpu=\"0\",name=\"NVIDIA H100 80GB HBM3\",uuid=\"GPU-5f1a\"} 1073741824\n",
           "kotae_gpu_memory_total_bytes{gpu=\"0\",name=\"NVIDIA H100 80GB HBM3\",uuid=\"GPU-5f1a\"} 85520809984\n",
           "kotae_gpu_temperature_celsius{gpu=\"0\",name=\"NVIDIA H100 80GB HBM3\",uuid=\"GPU-5f1a\"} 41\n",
           "kotae_gpu_temperature_celsius{gpu=\"1\",name=\"A \\\"quoted\\\\ name\\nwith a newline\",uuid=\"GPU-77\"} "
           "35\n",
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin\n" << text;
  }
  EXPECT_EQ(text.find("kotae_gpu_utilization_ratio{gpu=\"1\""), std::string::npos) << text;  // refused: left out
  EXPECT_EQ(gpu_metrics_text({}), "");

  const auto file = testing::fresh_temp_dir("kotae-gpu-metrics") / "metrics.txt";
  std::ofstream(file) << text;
  const auto said = file.string() + ".promtool";
  const int status = std::system(("promtool check metrics < " + file.string() + " > " + said + " 2>&1").c_str());
  std::ifstream in(said);
  EXPECT_EQ(status, 0) << std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A model whose GPU failed (model/gpu_failover.h): counted, and its provider series moves to the CPU.
TEST(GpuMetrics, AGpuFailoverIsCountedAndTheProviderMoves) {
  ServerMetrics metrics;
  metrics.model_loaded("all-minilm-l6-v2", "KotaeCUDA (Tesla T4)");
  metrics.gpu_failover("all-minilm-l6-v2", "KotaeCUDA (Tesla T4)", "CPUExecutionProvider");
  const std::string text = metrics.text();
  for (const char* expected : {R"(kotae_gpu_failovers_total{model="all-minilm-l6-v2"} 1)",
                               R"m(kotae_model_info{model="all-minilm-l6-v2",provider="KotaeCUDA (Tesla T4)"} 0)m",
                               R"(kotae_model_info{model="all-minilm-l6-v2",provider="CPUExecutionProvider"} 1)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin\n" << text;
  }
}

}  // namespace
}  // namespace kotae::server
