#include "model/model_loading.h"

#include <algorithm>

namespace kotae {

Result<ModelManifest> load_verified_manifest(const std::filesystem::path& model_dir, std::string_view kind) {
  auto manifest = load_model_manifest(model_dir);
  if (!manifest) return manifest.error();
  if (manifest->kind != kind) {
    return make_error(ErrorCode::model, "model " + manifest->name + " is a " + manifest->kind + " model, not " +
                                            std::string(kind));
  }
  for (const auto& check : verify_model_files(model_dir, *manifest)) {
    if (check.status == FileStatus::ok) continue;
    std::string message = "model " + manifest->name + ": " + (model_dir / check.path).string() + " is " + to_string(check.status);
    if (check.status == FileStatus::corrupt) {
      message += " (sha256 " + check.actual_sha256 + ", manifest says " + check.expected_sha256 + ")";
    }
    return make_error(check.status == FileStatus::missing ? ErrorCode::not_found : ErrorCode::corrupt, message);
  }
  return manifest;
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
    if (!session.has_input(name)) return make_error(ErrorCode::model, onnx_file.string() + ": lacks input '" + name + "'");
  }
  for (const auto& name : manifest.inputs) {
    if (!session.has_input(name)) {
      return make_error(ErrorCode::model, onnx_file.string() + ": manifest input '" + name + "' is not in the model");
    }
  }
  const auto& outputs = session.output_names();
  if (std::find(outputs.begin(), outputs.end(), manifest.output) == outputs.end()) {
    return make_error(ErrorCode::model, onnx_file.string() + ": manifest output '" + manifest.output + "' is not in the model");
  }
  return {};
}

}  // namespace kotae
