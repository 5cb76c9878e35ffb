#pragma once
// The steps every text model loader takes, in one order, whatever runs it (ONNX Runtime or the CUDA
// plugin, an encoder or a cross-encoder): pass the integrity gate (model/model_integrity.h: folder,
// symlinks, signature, kind, sizes, SHA-256), find the file it runs and read its tokenizer; then, for
// an ONNX graph, check that its inputs and outputs are the ones the manifest names.

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string_view>

#include "core/result.h"
#include "model/model_manifest.h"
#include "model/onnx_session.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

// verify_model_dir(DIR, kind): the manifest of a model that passed every check.
Result<ModelManifest> load_verified_manifest(const std::filesystem::path& model_dir, std::string_view kind);

// A verified model's manifest, the file it runs and its tokenizer.
struct TextModel {
  ModelManifest manifest;
  std::filesystem::path weights;  // the first file of the roles asked for that the manifest lists
  text::WordPieceTokenizer tokenizer;
};
// The integrity gate for `kind`, then the first of `roles` the manifest lists and its "tokenizer" file;
// when either is missing, the error `missing` makes of the manifest (a broken model for ONNX Runtime,
// unsupported for the CUDA plugin, so the ONNX twin is used).
Result<TextModel> open_text_model(const std::filesystem::path& model_dir, std::string_view kind,
                                  std::initializer_list<std::string_view> roles,
                                  const std::function<Error(const ModelManifest&)>& missing);

// A BERT-style graph takes only input_ids, attention_mask and token_type_ids (the last optional);
// every input and the output the manifest names must exist.
Result<void> check_bert_signature(const OnnxSession& session, const ModelManifest& manifest,
                                  const std::filesystem::path& onnx_file);

}  // namespace kotae
