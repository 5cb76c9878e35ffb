#include "model/encoder_loading.h"

#include <cstdlib>

#include "model/cuda_sentence_encoder.h"

namespace kotae {

Result<std::unique_ptr<Encoder>> load_best_encoder(const std::filesystem::path& model_dir, const EncoderOptions& options,
                                                   std::string* why_not_cuda) {
  const char* choice = std::getenv("KOTAE_ENCODER");
  const std::string wanted = choice ? choice : "auto";
  if (wanted != "auto" && wanted != "onnx" && wanted != "cuda") {
    return make_error(ErrorCode::invalid_argument, "KOTAE_ENCODER='" + wanted + "': auto, onnx or cuda");
  }
  std::string reason = "KOTAE_ENCODER=onnx";
  if (wanted != "onnx") {
    auto cuda = CudaSentenceEncoder::load(model_dir);
    if (cuda) {
      if (why_not_cuda) why_not_cuda->clear();
      return std::unique_ptr<Encoder>(std::move(*cuda));
    }
    if (wanted == "cuda") return cuda.error();
    reason = cuda.error().message;
  }
  if (why_not_cuda) *why_not_cuda = reason;
  auto onnx = SentenceEncoder::load(model_dir, options);
  if (!onnx) return onnx.error();
  return std::unique_ptr<Encoder>(std::move(*onnx));
}

}  // namespace kotae
