// The native encoder's plugin and the GPUs it runs on: it names the architectures it was built for
// (Turing's sm_75 among them), and a GPU outside them is refused with its compute capability before
// anything runs, so the ONNX encoder takes over and the operator hears why (no GPU needed here).
#include "model/cuda_plugin.h"

#include <gtest/gtest.h>

#include "support/test_data.h"

namespace kotae {
namespace {

const std::filesystem::path kPlugin = KOTAE_CUDA_ENCODER_PLUGIN;

bool plugin_built() {
  std::error_code ec;
  return std::filesystem::exists(kPlugin, ec);
}

TEST(CudaPlugin, NamesTheArchitecturesItWasBuiltFor) {
  if (!plugin_built()) GTEST_SKIP() << "no CUDA compiler: the plugin was not built";
  auto architectures = cuda_plugin_architectures(kPlugin);
  ASSERT_TRUE(architectures.ok()) << architectures.error().message;
  EXPECT_EQ(*architectures, (std::vector<std::string>{"75", "80", "90"}));
  EXPECT_EQ(describe_cuda_architectures(*architectures), "sm_75, sm_80, sm_90");
}

TEST(CudaPlugin, RunsOnTheGpusItsMachineCodeOrPtxCovers) {
  const std::vector<std::string> plugin = {"75", "80", "90"};  // machine code and PTX for each
  EXPECT_FALSE(cuda_architectures_run_on(plugin, 6, 1));       // Pascal
  EXPECT_FALSE(cuda_architectures_run_on(plugin, 7, 0));       // Volta: CUDA 13 builds nothing for it
  EXPECT_TRUE(cuda_architectures_run_on(plugin, 7, 5));        // T4
  EXPECT_TRUE(cuda_architectures_run_on(plugin, 8, 6));        // A10G runs sm_80 code
  EXPECT_TRUE(cuda_architectures_run_on(plugin, 8, 9));        // L4
  EXPECT_TRUE(cuda_architectures_run_on(plugin, 9, 0));
  EXPECT_TRUE(cuda_architectures_run_on(plugin, 12, 0));  // newer than the build: the driver compiles the PTX
  const std::vector<std::string> machine_code_only = {"80-real"};
  EXPECT_TRUE(cuda_architectures_run_on(machine_code_only, 8, 6));
  EXPECT_FALSE(cuda_architectures_run_on(machine_code_only, 9, 0));
  EXPECT_FALSE(cuda_architectures_run_on(machine_code_only, 7, 5));
  const std::vector<std::string> ptx_only = {"90-virtual"};
  EXPECT_TRUE(cuda_architectures_run_on(ptx_only, 10, 0));
  EXPECT_FALSE(cuda_architectures_run_on(ptx_only, 8, 9));
  EXPECT_FALSE(cuda_architectures_run_on({}, 9, 0));
  EXPECT_TRUE(cuda_architectures_run_on({"native"}, 7, 0));  // cannot tell here: the plugin checks at open
}

TEST(CudaPlugin, AGpuItWasNotBuiltForIsRefusedWithItsComputeCapability) {
  if (!plugin_built()) GTEST_SKIP() << "no CUDA compiler: the plugin was not built";
  GpuDevice volta;
  volta.name = "Tesla V100-SXM2-16GB";
  volta.compute_major = 7;
  volta.compute_minor = 0;
  const auto model = testing::model_dir("all-minilm-l6-v2");
  auto opened = open_cuda_encoder_plugin(kPlugin, model, "model.fp16.safetensors", volta, 12, 8, 128);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::unsupported);
  EXPECT_EQ(opened.error().message,
            "Tesla V100-SXM2-16GB (compute capability 7.0) is not a GPU the CUDA encoder plugin was built for "
            "(sm_75, sm_80, sm_90)");
}

}  // namespace
}  // namespace kotae
