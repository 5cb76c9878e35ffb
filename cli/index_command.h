#pragma once
// `kotae index PATH... --collection NAME`: ingests files and directories into a collection, with a
// progress bar; `--json` prints one line per file and a summary line instead.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "store/catalog.h"

namespace kotae::cli {

struct IndexOptions {
  store::CatalogOptions where;  // the store (--store, --index-cache) and the data directory (models)
  std::string collection;
  std::vector<std::filesystem::path> paths;
  std::vector<std::string> include, exclude;
  std::string model;             // empty: the collection's own, or the default for a new one
  std::size_t chunk_tokens = 0;  // 0: the default
  std::size_t overlap_tokens = 0;
  bool overlap_given = false;
  bool json = false;
  double max_seconds_per_file = 0;    // 0: no time budget
  std::string ocr_languages = "eng";  // Tesseract's for scans and images; "": no OCR
  int wait_s = 60;                    // for another process writing the collection
};

int run_index(const IndexOptions& options);

struct RemoveOptions {
  store::CatalogOptions where;  // the store (--store, --index-cache) and the data directory (models)
  std::string collection;
  std::vector<std::string> documents;  // paths as indexed (relative paths are made absolute)
  int wait_s = 60;                     // for another process writing the collection
};

// `kotae remove DOCUMENT... --collection NAME`: deletes documents from the collection everywhere.
int run_remove(const RemoveOptions& options);

}  // namespace kotae::cli
