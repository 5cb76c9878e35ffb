#pragma once
// `kotae search "QUERY" --collection NAME [--mode hybrid] [-k 10]`: the best chunks with rank, score,
// document, page, byte span and text (query words highlighted on a terminal); `--json` for tools.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "store/catalog.h"

namespace kotae::cli {

struct SearchCommandOptions {
  store::CatalogOptions where;  // the store (--store, --index-cache) and the data directory (models)
  std::string collection;
  std::string query;
  std::string mode = "hybrid";
  std::size_t k = 10;
  std::size_t candidates = 50;
  double rrf_k = 60;
  std::string path_prefix;
  std::vector<std::string> formats;
  std::string rerank_model;  // a cross-encoder in DATA/models; empty: no rerank
  bool json = false;
};

int run_search(const SearchCommandOptions& options);

}  // namespace kotae::cli
