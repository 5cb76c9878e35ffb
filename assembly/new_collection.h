#pragma once
// What a new collection is made with (POST /v1/collections): its name, its embedder and chunking.

#include <cstddef>
#include <string>

namespace kotae::assembly {

struct NewCollection {
  std::string name;
  std::string embedder;          // empty: the server's default
  std::size_t chunk_tokens = 0;  // 0: the chunker's default
  std::size_t overlap_tokens = 0;
};

}  // namespace kotae::assembly
