#pragma once
// libkotae_cuda_encoder.so, the native CUDA encoder's plugin (model/cuda), opened at run time for one
// model: the checks every user makes (the plugin never comes from the models directory, every symbol
// is there) and its open call. One stream and one set of buffers per opened model: callers hold
// `mutex` around each call (their batchers send one batch at a time anyway).

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "core/result.h"
#include "model/cuda/cuda_encoder_plugin.h"

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

// Opens `weights` (safetensors inside model_dir) for batches of up to `max_batch` texts of up to
// `max_tokens` tokens. Errors say why (unsupported: the plugin; model: the weights or the GPU).
Result<std::unique_ptr<CudaEncoderPlugin>> open_cuda_encoder_plugin(const std::filesystem::path& plugin_path,
                                                                    const std::filesystem::path& model_dir,
                                                                    const std::filesystem::path& weights, int heads,
                                                                    int max_batch, int max_tokens);

}  // namespace kotae
