#include "model/cuda_sentence_encoder.h"

#include <cmath>
#include <cstdlib>
#include <mutex>

#include "model/model_loading.h"
#include "platform/gpu_devices.h"

namespace kotae {

Result<std::unique_ptr<CudaSentenceEncoder>> CudaSentenceEncoder::load(const std::filesystem::path& model_dir,
                                                                       const std::filesystem::path& plugin_path) {
  const GpuReport gpus = probe_gpus();
  if (!gpus.present) return make_error(ErrorCode::unsupported, "no GPU: " + gpus.note);
  auto unsupported = [](const ModelManifest& m) {
    return Error{ErrorCode::unsupported, "model " + m.name + " has no FP16 safetensors for the CUDA encoder"};
  };
  auto model = KOTAE_TRY_VALUE(open_text_model(model_dir, "embedding", {"safetensors-fp16"}, unsupported));
  if (model.manifest.pooling != "mean" || model.manifest.heads <= 0) return unsupported(model.manifest);

  auto plugin = open_cuda_encoder_plugin(plugin_path, model_dir, model.weights.lexically_relative(model_dir),
                                         gpus.devices.front(), model.manifest.heads, 64, model.manifest.max_length);
  if (!plugin) return plugin.error();
  const std::string provider = "KotaeCUDA (" + (*plugin)->device + ")";
  std::unique_ptr<CudaSentenceEncoder> encoder(
      new CudaSentenceEncoder(std::move(model.manifest), std::move(model.tokenizer), std::move(*plugin)));
  encoder->provider_ = provider;
  return encoder;
}

CudaSentenceEncoder::CudaSentenceEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                                         std::unique_ptr<CudaEncoderPlugin> plugin)
    : manifest_(std::move(manifest)),
      prefixes_{manifest_.query_prefix, manifest_.passage_prefix},
      tokenizer_(std::move(tokenizer)),
      plugin_(std::move(plugin)) {}

CudaSentenceEncoder::~CudaSentenceEncoder() = default;

text::Encoding CudaSentenceEncoder::tokenize(std::string_view text) const {
  return tokenizer_.encode(text, static_cast<std::size_t>(manifest_.max_length));
}

Result<void> CudaSentenceEncoder::run(std::span<const text::Encoding> encodings, float* vectors,
                                      std::vector<float>* states) const {
  std::vector<int> ids, lengths;
  for (const auto& e : encodings) {
    const std::size_t n = std::min(e.ids.size(), static_cast<std::size_t>(manifest_.max_length));
    lengths.push_back(static_cast<int>(n));
    ids.insert(ids.end(), e.ids.begin(), e.ids.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (states) states->assign(ids.size() * dimension(), 0.0f);
  char error[512] = {};
  std::lock_guard lock(plugin_->mutex);
  if (plugin_->embed(plugin_->encoder, ids.data(), lengths.data(), static_cast<int>(encodings.size()), vectors,
                     states ? states->data() : nullptr, error, sizeof error) != 0) {
    return make_error(ErrorCode::model, std::string("CUDA encoder: ") + error);
  }
  return {};
}

Result<Embeddings> CudaSentenceEncoder::embed_encoded(std::span<const text::Encoding> encodings) const {
  Embeddings out{dimension(), std::vector<float>(encodings.size() * dimension())};
  if (encodings.empty()) return out;
  if (auto ok = run(encodings, out.values.data(), nullptr); !ok) return ok.error();
  return out;
}

Result<RangeEmbeddings> CudaSentenceEncoder::embed_encoded_with_ranges(
    std::span<const text::Encoding> encodings, std::span<const std::vector<TokenRange>> ranges) const {
  RangeEmbeddings out{{dimension(), std::vector<float>(encodings.size() * dimension())}, {dimension(), {}}};
  if (encodings.empty()) return out;
  std::vector<float> states;
  if (auto ok = run(encodings, out.inputs.values.data(), &states); !ok) return ok.error();
  // Each range: the mean of its tokens' final states, normalised, as the ONNX encoder pools them.
  const std::size_t d = dimension();
  std::size_t first_token = 0;
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    const std::size_t length = std::min(encodings[i].ids.size(), static_cast<std::size_t>(manifest_.max_length));
    for (const auto& r : i < ranges.size() ? ranges[i] : std::vector<TokenRange>{}) {
      std::vector<double> sum(d, 0.0);
      const std::size_t last = std::min(r.last, length), first = std::min(r.first, last);
      for (std::size_t t = first; t < last; ++t) {
        for (std::size_t c = 0; c < d; ++c) sum[c] += states[(first_token + t) * d + c];
      }
      double norm = 0;
      for (double v : sum) norm += v * v;
      norm = norm > 0 ? std::sqrt(norm) : 1.0;
      for (double v : sum) out.ranges.values.push_back(static_cast<float>(v / norm));
    }
    first_token += length;
  }
  return out;
}

}  // namespace kotae
