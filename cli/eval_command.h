#pragma once
// `kotae eval --dataset DIR [--models a,b,c]`: indexes a BEIR-layout dataset with each embedding model
// and prints MRR@10, nDCG@10, Recall@10 and Recall@100 for each model and search mode, with the model's
// encode speed, as one table; `--json` prints one JSON object per model and mode.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "search/hybrid_retriever.h"
#include "store/catalog.h"

namespace kotae::cli {

struct EvalOptions {
  store::CatalogOptions where;  // the store (--store, --index-cache) and the data directory (models)
  std::filesystem::path dataset;
  std::string collection;           // empty: a name derived from the dataset, model and chunking
  std::vector<std::string> models;  // empty: the default embedder
  // "fp32", "int8": each model at each (its static INT8 variant for int8, where it has one); empty:
  // the precision the CPU runs by default (load_best_encoder).
  std::vector<std::string> precisions;
  std::vector<std::string> modes{"bm25", "vector", "hybrid"};
  std::size_t chunk_tokens = 0;  // 0: the default
  std::size_t overlap_tokens = 0;
  bool overlap_given = false;
  double rrf_k = search::SearchOptions{}.rrf_k;
  std::string fusion = "linear";  // rrf or linear (search::SearchOptions' default)
  double bm25_weight = search::SearchOptions{}.bm25_weight, vector_weight = search::SearchOptions{}.vector_weight;
  double agreement_bonus = search::SearchOptions{}.agreement_bonus;
  std::size_t candidates = 300;
  std::string rerank_model;
  // Where to write each query's ranked chunks, one JSON line per model, precision, mode and query
  // (empty: nowhere), for offline replays of the fusion (bench/fusion_replay.py).
  std::filesystem::path runs;
  bool json = false;
};

int run_eval(const EvalOptions& options);

}  // namespace kotae::cli
