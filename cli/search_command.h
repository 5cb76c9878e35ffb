#pragma once
// `kotae search "QUERY" --collection NAME [--mode hybrid] [-k 10] [--where EXPR] [--document ID]...`: the
// best chunks with rank, score, document, page, byte span and text (query words highlighted on a
// terminal); `--json` for tools.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/catalog.h"
#include "store/collection.h"

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
  std::string where_filter;             // --where: a metadata filter (docs/search.md#metadata-filters)
  std::vector<std::int64_t> documents;  // --document: only these document ids
  std::string rerank_model;             // a cross-encoder in DATA/models; empty: no rerank
  bool json = false;
};

int run_search(const SearchCommandOptions& options);

// --where and --document into `filter`, the expression parsed and held against the collection's
// fields: invalid_argument, prefixed "--where: ", when it does not parse or names what no document has.
Result<void> add_filter_flags(store::SearchFilter& filter, const std::string& where_filter,
                              const std::vector<std::int64_t>& documents, const store::Collection& collection);

}  // namespace kotae::cli
