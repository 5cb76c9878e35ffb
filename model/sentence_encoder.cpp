#include "model/sentence_encoder.h"

#include <algorithm>
#include <cmath>

namespace kotae {
namespace {

Result<void> verify_files(const std::filesystem::path& dir, const ModelManifest& manifest) {
  for (const auto& check : verify_model_files(dir, manifest)) {
    if (check.status == FileStatus::ok) continue;
    return make_error(check.status == FileStatus::missing ? ErrorCode::not_found : ErrorCode::corrupt,
                      "model " + manifest.name + ": " + (dir / check.path).string() + " is " + to_string(check.status) +
                          (check.status == FileStatus::corrupt ? " (sha256 " + check.actual_sha256 + ", manifest says " +
                                                                     check.expected_sha256 + ")"
                                                               : ""));
  }
  return {};
}

Result<void> check_signature(const OnnxSession& session, const ModelManifest& manifest,
                             const std::filesystem::path& file) {
  static const std::vector<std::string> kKnownInputs = {"input_ids", "attention_mask", "token_type_ids"};
  for (const auto& name : session.input_names()) {
    if (std::find(kKnownInputs.begin(), kKnownInputs.end(), name) == kKnownInputs.end()) {
      return make_error(ErrorCode::model, file.string() + ": unexpected input '" + name + "'");
    }
  }
  for (const auto& name : manifest.inputs) {
    if (!session.has_input(name)) {
      return make_error(ErrorCode::model, file.string() + ": manifest input '" + name + "' is not in the model");
    }
  }
  const auto& outputs = session.output_names();
  if (std::find(outputs.begin(), outputs.end(), manifest.output) == outputs.end()) {
    return make_error(ErrorCode::model, file.string() + ": manifest output '" + manifest.output + "' is not in the model");
  }
  return {};
}

}  // namespace

SentenceEncoder::SentenceEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer,
                                 std::unique_ptr<OnnxSession> session)
    : manifest_(std::move(manifest)), tokenizer_(std::move(tokenizer)), session_(std::move(session)) {}

Result<std::unique_ptr<SentenceEncoder>> SentenceEncoder::load(const std::filesystem::path& model_dir,
                                                               const EncoderOptions& options) {
  auto manifest = load_model_manifest(model_dir);
  if (!manifest) return manifest.error();
  if (manifest->kind != "embedding") {
    return make_error(ErrorCode::model, "model " + manifest->name + " is a " + manifest->kind + " model, not an embedding model");
  }
  if (manifest->pooling != "mean" && manifest->pooling != "cls") {
    return make_error(ErrorCode::model, "model " + manifest->name + ": unknown pooling '" + manifest->pooling + "'");
  }
  if (manifest->dimension <= 0 || manifest->max_length <= 2) {
    return make_error(ErrorCode::model, "model " + manifest->name + ": manifest lacks dimension or max_length");
  }
  const ModelFile* onnx = manifest->file_with_role("onnx");
  const ModelFile* tokenizer_file = manifest->file_with_role("tokenizer");
  if (!onnx || !tokenizer_file) {
    return make_error(ErrorCode::model, "model " + manifest->name + ": manifest needs an onnx and a tokenizer file");
  }
  if (auto ok = verify_files(model_dir, *manifest); !ok) return ok.error();

  auto tokenizer = text::WordPieceTokenizer::from_tokenizer_json(model_dir / tokenizer_file->path);
  if (!tokenizer) return tokenizer.error();
  auto session = OnnxSession::open(model_dir / onnx->path, options.session);
  if (!session) return session.error();
  if (auto ok = check_signature(**session, *manifest, model_dir / onnx->path); !ok) return ok.error();

  std::unique_ptr<SentenceEncoder> encoder(
      new SentenceEncoder(std::move(*manifest), std::move(*tokenizer), std::move(*session)));
  if (options.warm_up) {
    const std::string probe = "warm-up";
    auto vectors = encoder->embed(std::span(&probe, 1));
    if (!vectors) return vectors.error();
    if (static_cast<int>(vectors->front().size()) != encoder->dimension()) {
      return make_error(ErrorCode::model, "model " + encoder->manifest_.name + ": produces " +
                                              std::to_string(vectors->front().size()) + " dimensions, manifest says " +
                                              std::to_string(encoder->dimension()));
    }
  }
  return encoder;
}

Result<std::vector<std::vector<float>>> SentenceEncoder::embed(std::span<const std::string> texts) const {
  std::vector<std::vector<float>> vectors;
  if (texts.empty()) return vectors;
  std::vector<text::Encoding> encodings;
  encodings.reserve(texts.size());
  std::size_t width = 0;
  for (const auto& t : texts) {
    encodings.push_back(tokenizer_.encode(t, static_cast<std::size_t>(manifest_.max_length)));
    width = std::max(width, encodings.back().size());
  }
  // Pad to the longest text in this batch, never to the model's maximum.
  const auto rows = static_cast<std::int64_t>(texts.size()), cols = static_cast<std::int64_t>(width);
  std::vector<std::int64_t> ids(rows * cols, tokenizer_.pad_id()), mask(rows * cols, 0), types(rows * cols, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto& e = encodings[r];
    for (std::size_t c = 0; c < e.size(); ++c) {
      ids[r * cols + c] = e.ids[c];
      mask[r * cols + c] = 1;
      types[r * cols + c] = e.type_ids[c];
    }
  }
  std::vector<Int64Input> inputs;
  for (const auto& name : session_->input_names()) {
    const std::int64_t* data = name == "input_ids" ? ids.data() : name == "attention_mask" ? mask.data() : types.data();
    inputs.push_back({name, data, rows, cols});
  }
  auto output = session_->run(inputs, manifest_.output);
  if (!output) return output.error();
  const auto& shape = output->shape;
  if (shape.size() != 3 || shape[0] != rows || shape[1] != cols) {
    return make_error(ErrorCode::model, "model " + manifest_.name + ": output '" + manifest_.output +
                                            "' is not [batch, tokens, hidden]");
  }
  const std::int64_t hidden = shape[2];
  vectors.assign(rows, std::vector<float>(hidden, 0.0f));
  for (std::int64_t r = 0; r < rows; ++r) {
    auto& v = vectors[r];
    const float* states = output->values.data() + r * cols * hidden;
    if (manifest_.pooling == "cls") {
      std::copy(states, states + hidden, v.begin());
    } else {
      const auto n = static_cast<std::int64_t>(encodings[r].size());
      for (std::int64_t t = 0; t < n; ++t) {
        for (std::int64_t h = 0; h < hidden; ++h) v[h] += states[t * hidden + h];
      }
      for (auto& x : v) x /= static_cast<float>(n);
    }
    if (manifest_.normalize) {
      double norm = 0;
      for (float x : v) norm += double(x) * x;
      const float scale = norm > 0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
      for (auto& x : v) x *= scale;
    }
  }
  return vectors;
}

}  // namespace kotae
