#include "model/cuda_plugin.h"

#include <dlfcn.h>

#include <cstdlib>

#include "model/model_integrity.h"

namespace kotae {

CudaEncoderPlugin::~CudaEncoderPlugin() {
  if (encoder && close) close(encoder);
  if (library) dlclose(library);
}

std::filesystem::path default_cuda_encoder_plugin() {
  if (const char* path = std::getenv("KOTAE_CUDA_ENCODER"); path && *path) return path;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "libkotae_cuda_encoder.so";
  const auto beside = self.parent_path() / "libkotae_cuda_encoder.so";
  const auto packaged = self.parent_path().parent_path() / "lib/kotae/libkotae_cuda_encoder.so";  // /usr/bin → /usr/lib/kotae
  return std::filesystem::exists(beside, ec) || !std::filesystem::exists(packaged, ec) ? beside : packaged;
}

Result<std::unique_ptr<CudaEncoderPlugin>> open_cuda_encoder_plugin(const std::filesystem::path& plugin_path,
                                                                    const std::filesystem::path& model_dir,
                                                                    const std::filesystem::path& weights, int heads,
                                                                    int max_batch, int max_tokens) {
  // Code is never loaded from where models live: the plugin comes from beside the binary or
  // $KOTAE_CUDA_ENCODER, and one placed in a models directory is refused.
  if (is_inside(plugin_path, model_dir.parent_path())) {
    return make_error(ErrorCode::unsupported, "refused to load the CUDA encoder plugin " + plugin_path.string() +
                                                  ": it lies in the models directory, and libraries are never loaded from there");
  }
  auto plugin = std::make_unique<CudaEncoderPlugin>();
  plugin->library = dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!plugin->library) {
    const char* why = dlerror();
    return make_error(ErrorCode::unsupported, "cannot open " + plugin_path.string() + ": " + (why ? why : "unknown"));
  }
  auto open = reinterpret_cast<KotaeCudaEncoderOpen>(dlsym(plugin->library, "kotae_cuda_encoder_open"));
  plugin->embed = reinterpret_cast<KotaeCudaEncoderEmbed>(dlsym(plugin->library, "kotae_cuda_encoder_embed"));
  plugin->score = reinterpret_cast<KotaeCudaEncoderScore>(dlsym(plugin->library, "kotae_cuda_encoder_score"));
  plugin->close = reinterpret_cast<KotaeCudaEncoderClose>(dlsym(plugin->library, "kotae_cuda_encoder_close"));
  auto device = reinterpret_cast<KotaeCudaEncoderDevice>(dlsym(plugin->library, "kotae_cuda_encoder_device"));
  if (!open || !plugin->embed || !plugin->score || !plugin->close || !device) {
    return make_error(ErrorCode::unsupported, plugin_path.string() + " is not a Kotae CUDA encoder plugin (or an older one)");
  }
  char error[512] = {};
  plugin->encoder = open((model_dir / weights).c_str(), heads, max_batch, max_tokens, error, sizeof error);
  if (!plugin->encoder) return make_error(ErrorCode::model, std::string("the CUDA encoder cannot start: ") + error);
  plugin->device = device(plugin->encoder);
  return plugin;
}

}  // namespace kotae
