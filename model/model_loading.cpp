#include "model/model_loading.h"

#include <algorithm>

#include "model/model_integrity.h"

namespace kotae {

Result<ModelManifest> load_verified_manifest(const std::filesystem::path& model_dir, std::string_view kind) {
  auto verified = verify_model_dir(model_dir, kind);
  if (!verified) return verified.error();
  return std::move(verified->manifest);
}

Result<TextModel> open_text_model(const std::filesystem::path& model_dir, std::string_view kind,
                                  std::initializer_list<std::string_view> roles,
                                  const std::function<Error(const ModelManifest&)>& missing) {
  auto manifest = KOTAE_TRY_VALUE(load_verified_manifest(model_dir, kind));
  const ModelFile* weights = nullptr;
  for (const auto role : roles) {
    if (!weights) weights = manifest.file_with_role(std::string(role));
  }
  const ModelFile* tokenizer_file = manifest.file_with_role("tokenizer");
  if (!weights || !tokenizer_file) return missing(manifest);
  auto tokenizer = KOTAE_TRY_VALUE(text::WordPieceTokenizer::from_tokenizer_json(model_dir / tokenizer_file->path));
  std::filesystem::path weights_path = model_dir / weights->path;
  return TextModel{std::move(manifest), std::move(weights_path), std::move(tokenizer)};
}

Result<void> check_bert_signature(const OnnxSession& session, const ModelManifest& manifest,
                                  const std::filesystem::path& onnx_file) {
  static const std::vector<std::string> kKnownInputs = {"input_ids", "attention_mask", "token_type_ids"};
  for (const auto& name : session.input_names()) {
    if (std::find(kKnownInputs.begin(), kKnownInputs.end(), name) == kKnownInputs.end()) {
      return make_error(ErrorCode::model, onnx_file.string() + ": unexpected input '" + name + "'");
    }
  }
  for (const auto& name : {std::string("input_ids"), std::string("attention_mask")}) {
    if (!session.has_input(name))
      return make_error(ErrorCode::model, onnx_file.string() + ": lacks input '" + name + "'");
  }
  for (const auto& name : manifest.inputs) {
    if (!session.has_input(name)) {
      return make_error(ErrorCode::model, onnx_file.string() + ": manifest input '" + name + "' is not in the model");
    }
  }
  const auto& outputs = session.output_names();
  if (std::find(outputs.begin(), outputs.end(), manifest.output) == outputs.end()) {
    return make_error(ErrorCode::model,
                      onnx_file.string() + ": manifest output '" + manifest.output + "' is not in the model");
  }
  return {};
}

}  // namespace kotae
