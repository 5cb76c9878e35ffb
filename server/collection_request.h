#pragma once
// What the collection endpoints read from a request: the body of POST /v1/collections and the
// {id} of a document in a path. Throws an ApiError (400) naming the field.

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "assembly/new_collection.h"

namespace kotae::server {

// POST /v1/collections {name, embedder?, chunk_tokens?, overlap_tokens?}
assembly::NewCollection read_new_collection(const nlohmann::json& body);
// A document id from a path: a positive decimal integer.
std::int64_t document_id(const std::string& text);

}  // namespace kotae::server
