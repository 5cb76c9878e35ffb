#include "model/cuda_plugin.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "model/model_integrity.h"

namespace kotae {
namespace {

Result<void*> open_library(const std::filesystem::path& plugin_path) {
  void* library = dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library) return library;
  const char* why = dlerror();
  return make_error(ErrorCode::unsupported, "cannot open " + plugin_path.string() + ": " + (why ? why : "unknown"));
}

Result<std::vector<std::string>> read_architectures(void* library, const std::filesystem::path& plugin_path) {
  auto built_for = reinterpret_cast<KotaeCudaEncoderArchitectures>(dlsym(library, "kotae_cuda_encoder_architectures"));
  if (!built_for)
    return make_error(ErrorCode::unsupported, plugin_path.string() + " is an older plugin: it names no architectures");
  std::vector<std::string> architectures;
  std::stringstream list(built_for());
  for (std::string entry; std::getline(list, entry, ',');) {
    if (!entry.empty()) architectures.push_back(entry);
  }
  if (architectures.empty())
    return make_error(ErrorCode::unsupported, plugin_path.string() + " did not record its architectures");
  return architectures;
}

}  // namespace

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
  const auto packaged =
      self.parent_path().parent_path() / "lib/kotae/libkotae_cuda_encoder.so";  // /usr/bin → /usr/lib/kotae
  return std::filesystem::exists(beside, ec) || !std::filesystem::exists(packaged, ec) ? beside : packaged;
}

Result<std::vector<std::string>> cuda_plugin_architectures(const std::filesystem::path& plugin_path) {
  auto library = open_library(plugin_path);
  if (!library) return library.error();
  auto architectures = read_architectures(*library, plugin_path);
  dlclose(*library);
  return architectures;
}

bool cuda_architectures_run_on(const std::vector<std::string>& architectures, int major, int minor) {
  const int gpu = major * 10 + minor;
  for (const auto& entry : architectures) {
    if (entry.empty() || !std::isdigit(static_cast<unsigned char>(entry[0])))
      return true;                               // "native", "all": the plugin checks at open
    const int built = std::atoi(entry.c_str());  // "86-real" -> 86
    const bool machine_code = !entry.ends_with("-virtual"), ptx = !entry.ends_with("-real");
    if (machine_code && built / 10 == major && built % 10 <= minor) return true;
    if (ptx && built > 0 && built <= gpu) return true;
  }
  return false;
}

std::string describe_cuda_architectures(const std::vector<std::string>& architectures) {
  std::string text;
  for (const auto& entry : architectures) text += (text.empty() ? "sm_" : ", sm_") + entry.substr(0, entry.find('-'));
  return text;
}

Result<std::unique_ptr<CudaEncoderPlugin>> open_cuda_encoder_plugin(const std::filesystem::path& plugin_path,
                                                                    const std::filesystem::path& model_dir,
                                                                    const std::filesystem::path& weights,
                                                                    const GpuDevice& gpu, int heads, int max_batch,
                                                                    int max_tokens) {
  // Code is never loaded from where models live: the plugin comes from beside the binary or
  // $KOTAE_CUDA_ENCODER, and one placed in a models directory is refused.
  if (is_inside(plugin_path, model_dir.parent_path())) {
    return make_error(ErrorCode::unsupported,
                      "refused to load the CUDA encoder plugin " + plugin_path.string() +
                          ": it lies in the models directory, and libraries are never loaded from there");
  }
  auto plugin = std::make_unique<CudaEncoderPlugin>();
  plugin->library = KOTAE_TRY_VALUE(open_library(plugin_path));
  auto open = reinterpret_cast<KotaeCudaEncoderOpen>(dlsym(plugin->library, "kotae_cuda_encoder_open"));
  plugin->embed = reinterpret_cast<KotaeCudaEncoderEmbed>(dlsym(plugin->library, "kotae_cuda_encoder_embed"));
  plugin->score = reinterpret_cast<KotaeCudaEncoderScore>(dlsym(plugin->library, "kotae_cuda_encoder_score"));
  plugin->close = reinterpret_cast<KotaeCudaEncoderClose>(dlsym(plugin->library, "kotae_cuda_encoder_close"));
  auto device = reinterpret_cast<KotaeCudaEncoderDevice>(dlsym(plugin->library, "kotae_cuda_encoder_device"));
  if (!open || !plugin->embed || !plugin->score || !plugin->close || !device) {
    return make_error(ErrorCode::unsupported,
                      plugin_path.string() + " is not a Kotae CUDA encoder plugin (or an older one)");
  }
  const auto architectures = KOTAE_TRY_VALUE(read_architectures(plugin->library, plugin_path));
  if (!cuda_architectures_run_on(architectures, gpu.compute_major, gpu.compute_minor)) {
    return make_error(ErrorCode::unsupported, gpu.name + " (compute capability " + std::to_string(gpu.compute_major) +
                                                  "." + std::to_string(gpu.compute_minor) +
                                                  ") is not a GPU the CUDA encoder plugin was built for (" +
                                                  describe_cuda_architectures(architectures) + ")");
  }
  char error[512] = {};
  plugin->encoder = open((model_dir / weights).c_str(), heads, max_batch, max_tokens, error, sizeof error);
  if (!plugin->encoder) return make_error(ErrorCode::model, std::string("the CUDA encoder cannot start: ") + error);
  plugin->device = device(plugin->encoder);
  return plugin;
}

}  // namespace kotae
