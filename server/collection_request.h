#pragma once
// What the collection endpoints read from a request: the bodies of POST /v1/collections and PATCH
// /v1/collections/{name}, and the {id} of a document in a path. Throws an ApiError (400) naming the field.

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "assembly/new_collection.h"

namespace kotae::server {

// POST /v1/collections {name, embedder?, chunk_tokens?, overlap_tokens?}
assembly::NewCollection read_new_collection(const nlohmann::json& body);
// PATCH /v1/collections/{name} {name}: the new name (the route checks it against the catalog's rules); no other field.
std::string read_collection_rename(const nlohmann::json& body);
// A document id from a path: a positive decimal integer.
std::int64_t document_id(const std::string& text);

}  // namespace kotae::server
