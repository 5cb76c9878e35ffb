#pragma once
// `kotae collections list|show|delete` and `kotae models list`: what this data directory (or --store)
// holds, for people and, with --json, for scripts.
//
//   kotae collections list [--json]          name, documents, chunks, embedder, bytes of each
//   kotae collections show NAME [--json]     the same for one, with its chunking and its documents
//   kotae collections delete NAME            the collection and its files (waits for a writer)
//   kotae models list [--json]               each installed model: kind, precision, description

#include <string>

#include "store/catalog.h"

namespace kotae::cli {

struct CollectionsOptions {
  store::CatalogOptions where;
  std::string name;  // show, delete
  bool json = false;
  double wait_s = 60;  // delete: for a writer (kotae index) to finish
};

int run_collections_list(const CollectionsOptions& options);
int run_collections_show(const CollectionsOptions& options);
int run_collections_delete(const CollectionsOptions& options);
int run_models_list(const std::filesystem::path& data_dir, bool json);

}  // namespace kotae::cli
