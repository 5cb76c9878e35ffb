#pragma once
// libkotae_cuda_encoder.so, the native CUDA encoder's plugin (model/cuda), opened at run time for one
// model: the checks every user makes (the plugin never comes from the models directory, every symbol
// is there) and its open call. One stream and one set of buffers per opened model: callers hold
// `mutex` around each call (their batchers send one batch at a time anyway).

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/cuda/cuda_encoder_plugin.h"
#include "platform/gpu_devices.h"

namespace kotae {

// Where the plugin is looked for: $KOTAE_CUDA_ENCODER, else beside the running binary, else where the
// Debian package puts it (../lib/kotae from the binary).
std::filesystem::path default_cuda_encoder_plugin();

struct CudaEncoderPlugin {
  void* library = nullptr;
  void* encoder = nullptr;
  KotaeCudaEncoderEmbed embed = nullptr;
  KotaeCudaEncoderScore score = nullptr;
  KotaeCudaEncoderClose close = nullptr;
  std::string device;  // the GPU's name
  std::mutex mutex;

  ~CudaEncoderPlugin();
};

// The GPU architectures a plugin was built for, in CMake's notation ("75", "80-real", "90-virtual"),
// read from the plugin itself; an error where it cannot be opened or did not record them.
Result<std::vector<std::string>> cuda_plugin_architectures(const std::filesystem::path& plugin_path);

// Whether code built for `architectures` runs on a GPU of compute capability major.minor: machine code
// of the same major version and a minor no higher, or PTX (every entry but "-real") no higher than the
// GPU, which the driver compiles for it. CMake's "native" or "all" cannot be checked here: true (the
// plugin itself refuses a GPU it has no code for when it opens).
bool cuda_architectures_run_on(const std::vector<std::string>& architectures, int major, int minor);
std::string describe_cuda_architectures(const std::vector<std::string>& architectures);  // "sm_75, sm_80, sm_90"

// Opens `weights` (safetensors inside model_dir) on `gpu` (the first the driver lists, which the plugin
// uses) for batches of up to `max_batch` texts of up to `max_tokens` tokens. Errors say why
// (unsupported: the plugin, or a GPU it was not built for, with its compute capability; model: the
// weights or the GPU).
Result<std::unique_ptr<CudaEncoderPlugin>> open_cuda_encoder_plugin(const std::filesystem::path& plugin_path,
                                                                    const std::filesystem::path& model_dir,
                                                                    const std::filesystem::path& weights,
                                                                    const GpuDevice& gpu, int heads, int max_batch,
                                                                    int max_tokens);

}  // namespace kotae
