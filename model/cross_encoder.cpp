#include "model/cross_encoder.h"

#include <algorithm>

#include "model/bert_batch.h"
#include "model/model_loading.h"

namespace kotae {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  }
  return text + "]";
}

// [batch, 1] or [batch, 2]; -1 marks an axis only known when the model runs.
bool is_logits_shape(const std::vector<std::int64_t>& shape) {
  return shape.size() == 2 && (shape[1] < 0 || shape[1] == 1 || shape[1] == 2);
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

CrossEncoder::CrossEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                           std::unique_ptr<OnnxSession> session, std::string onnx_file, CrossEncoderOptions options)
    : manifest_(std::move(manifest)),
      tokenizer_(std::move(tokenizer)),
      session_(std::move(session)),
      onnx_file_(std::move(onnx_file)),
      options_(std::move(options)) {}

Result<std::unique_ptr<CrossEncoder>> CrossEncoder::load(const std::filesystem::path& model_dir,
                                                         const CrossEncoderOptions& options) {
  // Checksums first: ONNX Runtime never reads a file the manifest does not vouch for.
  auto model = KOTAE_TRY_VALUE(open_text_model(model_dir, "reranker", {"onnx"}, [](const ModelManifest& m) {
    return Error{ErrorCode::model, "model " + m.name + ": manifest needs an onnx and a tokenizer file"};
  }));
  const ModelManifest& manifest = model.manifest;
  const std::string& name = manifest.name;
  // Three tokens go to [CLS] and two [SEP]; the passage needs room for at least one more.
  if (manifest.max_length <= 4) {
    return make_error(ErrorCode::model, "model " + name + ": manifest max_length " +
                                            std::to_string(manifest.max_length) + " is not the model's token limit");
  }
  if (manifest.output.empty()) {
    return make_error(ErrorCode::model,
                      "model " + name + ": manifest names no output (Hugging Face exports: \"logits\")");
  }
  const std::string onnx_file = model.weights.string();
  auto session = KOTAE_TRY_VALUE(OnnxSession::open(model.weights, options.session));
  const auto& outputs = session->output_names();
  if (std::find(outputs.begin(), outputs.end(), manifest.output) == outputs.end()) {
    return make_error(ErrorCode::model, onnx_file + ": manifest output '" + manifest.output +
                                            "' is not in the model (its outputs: " + joined(outputs) + ")");
  }
  KOTAE_TRY(check_bert_signature(*session, manifest, onnx_file));
  if (const auto shape = session->output_shape(manifest.output); !is_logits_shape(shape)) {
    return make_error(ErrorCode::model, onnx_file + ": output '" + manifest.output + "' has shape " +
                                            shape_text(shape) + ", not [batch, 1] or [batch, 2]");
  }

  std::unique_ptr<CrossEncoder> encoder(
      new CrossEncoder(std::move(model.manifest), std::move(model.tokenizer), std::move(session), onnx_file, options));
  if (options.warm_up) {
    const std::string passage = "Kotae warms up every model before it serves.";
    if (auto scores = encoder->score("Does Kotae warm up its models?", std::span(&passage, 1)); !scores) {
      return scores.error();
    }
  }
  return encoder;
}

text::Encoding CrossEncoder::encode(std::string_view query, std::string_view passage) const {
  return tokenizer_.encode_pair(query, passage, static_cast<std::size_t>(manifest_.max_length),
                                text::PairTruncation::only_second);
}

std::size_t CrossEncoder::untruncated_pair_tokens(std::string_view query, std::string_view passage) const {
  return tokenizer_.encode_pair(query, passage, 0, text::PairTruncation::only_second).size();
}

Result<std::vector<float>> CrossEncoder::score_encoded(std::span<const text::Encoding> pairs) const {
  std::vector<float> scores(pairs.size(), 0.0f);
  // Scores go back to the caller's order through `targets`.
  const RunLimits limits{options_.max_batch_items, options_.max_batch_tokens};
  std::vector<const text::Encoding*> rows;
  std::vector<float*> targets;
  for (const auto& run : plan_length_runs(pairs, limits)) {
    rows.clear();
    targets.clear();
    for (const std::size_t i : run) {
      rows.push_back(&pairs[i]);
      targets.push_back(&scores[i]);
    }
    if (auto ok = run_batch(rows, targets); !ok) return ok.error();
  }
  return scores;
}

Result<void> CrossEncoder::run_batch(std::span<const text::Encoding* const> rows,
                                     std::span<float* const> scores) const {
  const BertBatch batch(rows, tokenizer_.pad_id());
  std::string shape_error;
  auto take = [&](const FloatTensorView& view) {
    if (view.shape.size() != 2 || view.shape[0] != batch.rows() || (view.shape[1] != 1 && view.shape[1] != 2)) {
      shape_error = "output '" + manifest_.output + "' has shape " + shape_text(view.shape) + " for " +
                    std::to_string(batch.rows()) + " pairs, not [" + std::to_string(batch.rows()) + ", 1 or 2]";
      return;
    }
    const std::int64_t labels = view.shape[1];
    for (std::int64_t r = 0; r < batch.rows(); ++r) {
      const float* logits = view.data + r * labels;
      *scores[r] = labels == 1 ? logits[0] : logits[1] - logits[0];
    }
  };
  if (auto ok = session_->run(batch.inputs_for(*session_), manifest_.output, take); !ok) {
    return make_error(ok.error().code, onnx_file_ + ": " + ok.error().message);
  }
  if (!shape_error.empty()) return make_error(ErrorCode::model, onnx_file_ + ": " + shape_error);
  return {};
}

}  // namespace kotae
