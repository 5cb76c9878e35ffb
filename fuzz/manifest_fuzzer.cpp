// The model manifest parser (model/model_manifest.h). A manifest comes from a model folder a user may
// have copied from anywhere; whatever it holds, parsing gives an Error or a manifest that names only
// files inside the model's folder, each with a SHA-256.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "core/assert.h"
#include "model/model_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const auto manifest = kotae::parse_model_manifest(json, "fuzz/manifest.json");
  if (!manifest) {
    KOTAE_ASSERT(manifest.error().code == kotae::ErrorCode::corrupt);
    return 0;
  }
  KOTAE_ASSERT(!manifest->files.empty());
  for (const auto& file : manifest->files) {
    KOTAE_ASSERT(file.sha256.size() == 64);
    const std::filesystem::path path(file.path);
    KOTAE_ASSERT(!path.empty() && path.is_relative());
    for (const auto& part : path) KOTAE_ASSERT(part != ".." && part != ".");
    KOTAE_ASSERT(manifest->file_with_role(file.role) != nullptr);
  }
  return 0;
}
