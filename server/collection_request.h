#pragma once
// What the collection endpoints read from a request: the body of POST /v1/collections and the
// {id} of a document in a path. Throws an ApiError (400) naming the field.

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kotae::server {

struct NewCollection {
  std::string name;
  std::string embedder;          // empty: the server's default
  std::size_t chunk_tokens = 0;  // 0: the chunker's default
  std::size_t overlap_tokens = 0;
};

// POST /v1/collections {name, embedder?, chunk_tokens?, overlap_tokens?}
NewCollection read_new_collection(const nlohmann::json& body);
// A document id from a path: a positive decimal integer.
std::int64_t document_id(const std::string& text);

}  // namespace kotae::server
