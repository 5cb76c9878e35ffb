// kotae-bench-grow: a collection of N chunks grown from a real one (bench/sized_collection.h), for
// benchmarks that serve a large collection (bench/server).

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/sized_collection.h"

int main(int argc, char** argv) {
  CLI::App app{"grow a collection to a chosen number of chunks from a real one"};
  std::filesystem::path source_dir, target_dir;
  std::size_t chunks = 100000;
  app.add_option("--source", source_dir, "collection with real chunks and embeddings")->required();
  app.add_option("--out", target_dir, "the collection to build (replaced)")->required();
  app.add_option("--chunks", chunks, "chunks it will hold (at least)");
  CLI11_PARSE(app, argc, argv);

  const auto start = std::chrono::steady_clock::now();
  auto source = kotae::store::Collection::open(source_dir);
  if (!source) {
    std::cerr << "kotae-bench-grow: " << source.error().message << "\n";
    return 2;
  }
  auto grown = kotae::bench::grow_collection(**source, target_dir, chunks);
  if (!grown) {
    std::cerr << "kotae-bench-grow: " << grown.error().message << "\n";
    return 2;
  }
  std::cout << nlohmann::json{{"name", "grown_collection"},
                              {"chunks", (*grown)->chunk_count()},
                              {"documents", (*grown)->document_count()},
                              {"source_chunks", (*source)->chunk_count()},
                              {"build_s",
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}}
                   .dump()
            << std::endl;
  return 0;
}
