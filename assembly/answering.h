#pragma once
// One question's pipeline outside the server (`kotae ask`): the collection with the embedder that built
// it, the reranker, the answer back-ends in order, and the answer pipeline over them. The server builds
// the same parts once and shares them (assembly/model_pool.h, assembly/collection_registry.h).

#include <filesystem>
#include <memory>
#include <string>

#include "assembly/collection_access.h"
#include "core/result.h"
#include "rag/answer_backends.h"
#include "rag/answer_pipeline.h"
#include "store/catalog.h"

namespace kotae::assembly {

struct AnsweringSettings {
  store::CatalogOptions where;  // the store and the data directory (models)
  std::string collection;
  std::string rerank_model;       // a cross-encoder in DATA/models; empty: no reranking
  rag::BackendSettings backends;  // its data_dir is taken from `where`
};

// Owns every part; `pipeline` answers over `collection()`.
struct Answering {
  OpenCollection open;
  std::unique_ptr<PairScorer> reranker;
  rag::AnswerBackends backends;
  std::unique_ptr<rag::AnswerPipeline> pipeline;

  store::Collection& collection() { return *open.collection; }
};

Result<std::unique_ptr<Answering>> assemble_answering(AnsweringSettings settings);

// The generator an answer worker runs (`kotae worker --answers`): the back-ends `settings` names, of
// which the first with a generator is used; unavailable (saying why) when none has one.
struct Generating {
  rag::AnswerBackends backends;
  Generator* generator = nullptr;
};
Result<Generating> assemble_generator(rag::BackendSettings settings, const std::filesystem::path& data_dir);

}  // namespace kotae::assembly
