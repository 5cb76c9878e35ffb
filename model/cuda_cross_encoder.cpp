#include "model/cuda_cross_encoder.h"

#include <algorithm>

#include "model/model_loading.h"
#include "platform/gpu_devices.h"

namespace kotae {

Result<std::unique_ptr<CudaCrossEncoder>> CudaCrossEncoder::load(const std::filesystem::path& model_dir,
                                                                 const std::filesystem::path& plugin_path) {
  const GpuReport gpus = probe_gpus();
  if (!gpus.present) return make_error(ErrorCode::unsupported, "no GPU: " + gpus.note);
  auto unsupported = [](const ModelManifest& m) {
    return Error{ErrorCode::unsupported, "reranker " + m.name +
                                             " lists no safetensors weights, heads and max_length for the CUDA "
                                             "cross-encoder"};
  };
  auto files =
      KOTAE_TRY_VALUE(open_text_model(model_dir, "reranker", {"safetensors-fp16", "safetensors"}, unsupported));
  if (files.manifest.heads <= 0 || files.manifest.max_length <= 4) return unsupported(files.manifest);
  auto plugin = open_cuda_encoder_plugin(plugin_path, model_dir, files.weights.lexically_relative(model_dir),
                                         gpus.devices.front(), files.manifest.heads, 128, files.manifest.max_length);
  if (!plugin) return plugin.error();
  const std::string provider = "KotaeCUDA (" + (*plugin)->device + ")";
  std::unique_ptr<CudaCrossEncoder> model(
      new CudaCrossEncoder(std::move(files.manifest), std::move(files.tokenizer), std::move(*plugin)));
  model->provider_ = provider;
  // A first batch, so weights that are an encoder without a classifier head fail here, not at a question.
  const std::string passage = "warm-up passage";
  if (auto scored = model->score("warm-up", std::span(&passage, 1)); !scored) return scored.error();
  return model;
}

CudaCrossEncoder::CudaCrossEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                                   std::unique_ptr<CudaEncoderPlugin> plugin)
    : manifest_(std::move(manifest)), tokenizer_(std::move(tokenizer)), plugin_(std::move(plugin)) {}

CudaCrossEncoder::~CudaCrossEncoder() = default;

text::Encoding CudaCrossEncoder::encode(std::string_view query, std::string_view passage) const {
  return tokenizer_.encode_pair(query, passage, static_cast<std::size_t>(manifest_.max_length),
                                text::PairTruncation::only_second);
}

Result<std::vector<float>> CudaCrossEncoder::score_encoded(std::span<const text::Encoding> pairs) const {
  std::vector<float> scores(pairs.size());
  if (pairs.empty()) return scores;
  std::vector<int> ids, types, lengths;
  for (const auto& p : pairs) {
    lengths.push_back(static_cast<int>(p.ids.size()));
    ids.insert(ids.end(), p.ids.begin(), p.ids.end());
    types.insert(types.end(), p.type_ids.begin(), p.type_ids.end());
  }
  char error[512] = {};
  std::lock_guard lock(plugin_->mutex);
  if (plugin_->score(plugin_->encoder, ids.data(), types.data(), lengths.data(), static_cast<int>(pairs.size()),
                     scores.data(), error, sizeof error) != 0) {
    return make_error(ErrorCode::model, std::string("CUDA cross-encoder: ") + error);
  }
  return scores;
}

}  // namespace kotae
