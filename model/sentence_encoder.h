#pragma once
// Text -> L2-normalised sentence vector with a BERT-style ONNX encoder: tokenise, run, pool (mean or
// CLS, as the manifest says), normalise. The model is verified against its manifest before loading.

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/model_manifest.h"
#include "model/onnx_session.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

struct EncoderOptions {
  OnnxSessionOptions session;
  bool warm_up = true;
};

class SentenceEncoder {
 public:
  static Result<std::unique_ptr<SentenceEncoder>> load(const std::filesystem::path& model_dir,
                                                       const EncoderOptions& options = {});

  // One vector of dimension() floats per text, in input order.
  Result<std::vector<std::vector<float>>> embed(std::span<const std::string> texts) const;

  int dimension() const { return manifest_.dimension; }
  const ModelManifest& manifest() const { return manifest_; }
  const std::string& provider() const { return session_->provider(); }

 private:
  SentenceEncoder(ModelManifest manifest, text::WordPieceTokenizer tokenizer, std::unique_ptr<OnnxSession> session);

  ModelManifest manifest_;
  text::WordPieceTokenizer tokenizer_;
  std::unique_ptr<OnnxSession> session_;
};

}  // namespace kotae
