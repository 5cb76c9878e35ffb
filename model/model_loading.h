#pragma once
// The steps every ONNX text model takes before it may run: pass the integrity gate
// (model/model_integrity.h: folder, symlinks, signature, kind, sizes, SHA-256), then check that the
// graph's inputs and outputs are the ones the manifest names.

#include <filesystem>

#include "core/result.h"
#include "model/model_manifest.h"
#include "model/onnx_session.h"

namespace kotae {

// verify_model_dir(DIR, kind): the manifest of a model that passed every check.
Result<ModelManifest> load_verified_manifest(const std::filesystem::path& model_dir, std::string_view kind);

// A BERT-style graph takes only input_ids, attention_mask and token_type_ids (the last optional);
// every input and the output the manifest names must exist.
Result<void> check_bert_signature(const OnnxSession& session, const ModelManifest& manifest,
                                  const std::filesystem::path& onnx_file);

}  // namespace kotae
