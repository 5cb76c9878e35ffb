#include "assembly/answering.h"

namespace kotae::assembly {

Result<std::unique_ptr<Answering>> assemble_answering(AnsweringSettings settings) {
  auto answering = std::make_unique<Answering>();
  answering->open = KOTAE_TRY_VALUE(open_for_search(settings.where, settings.collection));
  answering->reranker = KOTAE_TRY_VALUE(load_reranker(settings.where.data_dir, settings.rerank_model));
  settings.backends.data_dir = settings.where.data_dir;
  answering->backends = KOTAE_TRY_VALUE(rag::set_up_backends(settings.backends));
  answering->pipeline = std::make_unique<rag::AnswerPipeline>(*answering->open.encoder, answering->reranker.get(),
                                                              answering->backends.order);
  return answering;
}

Result<Generating> assemble_generator(rag::BackendSettings settings, const std::filesystem::path& data_dir) {
  settings.data_dir = data_dir;
  Generating generating{KOTAE_TRY_VALUE(rag::set_up_backends(settings)), nullptr};
  generating.generator = generating.backends.first_generator();
  if (!generating.generator) {
    return make_error(ErrorCode::unavailable, generating.backends.order.empty()
                                                  ? std::string("no answer back-end is set up")
                                                  : generating.backends.order.front().unavailable);
  }
  return generating;
}

}  // namespace kotae::assembly
