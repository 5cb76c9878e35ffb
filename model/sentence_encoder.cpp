#include "model/sentence_encoder.h"

#include <algorithm>
#include <cmath>

#include "model/bert_batch.h"
#include "model/model_loading.h"

namespace kotae {

SentenceEncoder::SentenceEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                                 std::unique_ptr<OnnxSession> session, EncoderOptions options)
    : manifest_(std::move(manifest)),
      prefixes_{manifest_.query_prefix, manifest_.passage_prefix},
      tokenizer_(std::move(tokenizer)),
      session_(std::move(session)),
      options_(std::move(options)) {}

Result<std::unique_ptr<SentenceEncoder>> SentenceEncoder::load(const std::filesystem::path& model_dir,
                                                               const EncoderOptions& options) {
  const std::string role = options.precision == EncoderOptions::Precision::fp16   ? "onnx-fp16"
                           : options.precision == EncoderOptions::Precision::int8 ? "onnx-int8"
                                                                                  : "onnx";
  auto model = KOTAE_TRY_VALUE(open_text_model(model_dir, "embedding", {role}, [&](const ModelManifest& m) {
    return Error{ErrorCode::model, "model " + m.name + ": manifest needs an " + role + " and a tokenizer file"};
  }));
  const ModelManifest& manifest = model.manifest;
  if (manifest.pooling != "mean" && manifest.pooling != "cls") {
    return make_error(ErrorCode::model, "model " + manifest.name + ": unknown pooling '" + manifest.pooling + "'");
  }
  if (manifest.dimension <= 0 || manifest.max_length <= 2) {
    return make_error(ErrorCode::model, "model " + manifest.name + ": manifest lacks dimension or max_length");
  }
  auto session = KOTAE_TRY_VALUE(OnnxSession::open(model.weights, options.session));
  KOTAE_TRY(check_bert_signature(*session, manifest, model.weights));
  const auto shape = session->output_shape(manifest.output);
  if (shape.size() != 3 || (shape[2] > 0 && shape[2] != manifest.dimension)) {
    return make_error(ErrorCode::model, model.weights.string() + ": output '" + manifest.output +
                                            "' is not [batch, tokens, " + std::to_string(manifest.dimension) + "]");
  }

  std::unique_ptr<SentenceEncoder> encoder(
      new SentenceEncoder(std::move(model.manifest), std::move(model.tokenizer), std::move(session), options));
  if (options.warm_up) {
    const std::string probe = "Kotae warms up every model before it serves.";
    if (auto vectors = encoder->embed(std::span(&probe, 1), TextRole::passage); !vectors) return vectors.error();
  }
  return encoder;
}

std::string SentenceEncoder::precision() const {
  switch (options_.precision) {
    case EncoderOptions::Precision::fp16: return "fp16";
    case EncoderOptions::Precision::int8: return "int8";
    case EncoderOptions::Precision::fp32: break;
  }
  return manifest_.precision;  // an INT8 model's only file is its "onnx"
}

text::Encoding SentenceEncoder::tokenize(std::string_view text) const {
  return tokenizer_.encode(text, static_cast<std::size_t>(manifest_.max_length));
}

namespace {

// One target per input, each writing its row of `out`.
template <class Target>
std::vector<Target> row_targets(Embeddings& out, std::size_t rows, bool unnormalized) {
  std::vector<Target> targets(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    targets[i].output = out.values.data() + i * out.dimension;
    targets[i].unnormalized = unnormalized;
  }
  return targets;
}

}  // namespace

Result<Embeddings> SentenceEncoder::embed_encoded(std::span<const text::Encoding> encodings) const {
  Embeddings out{dimension(), std::vector<float>(encodings.size() * dimension(), 0.0f)};
  if (auto ok = embed_into(encodings, row_targets<PoolTarget>(out, encodings.size(), false)); !ok) return ok.error();
  return out;
}

Result<Embeddings> SentenceEncoder::embed_encoded_unnormalized(std::span<const text::Encoding> encodings) const {
  Embeddings out{dimension(), std::vector<float>(encodings.size() * dimension(), 0.0f)};
  if (auto ok = embed_into(encodings, row_targets<PoolTarget>(out, encodings.size(), true)); !ok) return ok.error();
  return out;
}

Result<RangeEmbeddings> SentenceEncoder::embed_encoded_with_ranges(
    std::span<const text::Encoding> encodings, std::span<const std::vector<TokenRange>> ranges) const {
  if (manifest_.pooling != "mean") return Encoder::embed_encoded_with_ranges(encodings, ranges);
  if (ranges.size() != encodings.size()) {
    return make_error(ErrorCode::invalid_argument, "one list of token ranges per input is needed");
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    for (const auto& r : ranges[i]) {
      if (r.first >= r.last || r.last > encodings[i].size()) {
        return make_error(ErrorCode::invalid_argument, "token range [" + std::to_string(r.first) + ", " +
                                                           std::to_string(r.last) + ") is outside input " +
                                                           std::to_string(i));
      }
    }
    total += ranges[i].size();
  }
  RangeEmbeddings out{{dimension(), std::vector<float>(encodings.size() * dimension(), 0.0f)},
                      {dimension(), std::vector<float>(total * dimension(), 0.0f)}};
  std::vector<PoolTarget> targets(encodings.size());
  for (std::size_t i = 0, row = 0; i < encodings.size(); row += ranges[i].size(), ++i) {
    targets[i] = {out.inputs.values.data() + i * dimension(), &ranges[i], out.ranges.values.data() + row * dimension()};
  }
  if (auto ok = embed_into(encodings, targets); !ok) return ok.error();
  return out;
}

Result<void> SentenceEncoder::embed_into(std::span<const text::Encoding> encodings,
                                         std::span<const PoolTarget> targets) const {
  const RunLimits limits{options_.max_batch_items, options_.max_batch_tokens, options_.min_length_ratio};
  std::vector<const text::Encoding*> rows;
  std::vector<PoolTarget> run_targets;
  for (const auto& run : plan_length_runs(encodings, limits)) {
    rows.clear();
    run_targets.clear();
    for (const std::size_t i : run) {
      rows.push_back(&encodings[i]);
      run_targets.push_back(targets[i]);
    }
    if (auto ok = run_batch(rows, run_targets); !ok) return ok.error();
  }
  return {};
}

namespace {

// Sums token states [first, last) into v, then scales: to unit length, or to the mean.
void pool_tokens(const float* states, std::size_t first, std::size_t last, std::size_t dim, bool normalize, float* v) {
  for (std::size_t t = first; t < last; ++t) {
    for (std::size_t h = 0; h < dim; ++h) v[h] += states[t * dim + h];
  }
  double norm = 0;
  for (std::size_t h = 0; h < dim; ++h) norm += double(v[h]) * v[h];
  // Mean pooling's division cancels out in L2 normalisation; do it only when not normalising.
  const double scale = normalize ? (norm > 0 ? 1.0 / std::sqrt(norm) : 0.0) : 1.0 / double(last - first);
  for (std::size_t h = 0; h < dim; ++h) v[h] = static_cast<float>(v[h] * scale);
}

}  // namespace

Result<void> SentenceEncoder::run_batch(std::span<const text::Encoding* const> rows,
                                        std::span<const PoolTarget> targets) const {
  const BertBatch batch(rows, tokenizer_.pad_id());
  const std::size_t dim = dimension();
  const bool mean = manifest_.pooling == "mean";
  std::string shape_error;
  auto pool = [&](const FloatTensorView& view) {
    if (view.shape.size() != 3 || view.shape[0] != batch.rows() || view.shape[1] != batch.cols() ||
        view.shape[2] != static_cast<std::int64_t>(dim)) {
      shape_error = "output '" + manifest_.output + "' has an unexpected shape";
      return;
    }
    for (std::int64_t r = 0; r < batch.rows(); ++r) {
      const float* states = view.data + r * batch.cols() * static_cast<std::int64_t>(dim);
      const PoolTarget& target = targets[static_cast<std::size_t>(r)];
      pool_tokens(states, 0, mean ? batch.row_length(r) : 1, dim, manifest_.normalize && !target.unnormalized,
                  target.output);
      if (!target.ranges) continue;
      for (std::size_t k = 0; k < target.ranges->size(); ++k) {
        const TokenRange& range = (*target.ranges)[k];
        pool_tokens(states, range.first, range.last, dim, manifest_.normalize, target.range_outputs + k * dim);
      }
    }
  };
  if (auto ok = session_->run(batch.inputs_for(*session_), manifest_.output, pool); !ok) return ok.error();
  if (!shape_error.empty()) return make_error(ErrorCode::model, "model " + manifest_.name + ": " + shape_error);
  return {};
}

}  // namespace kotae
