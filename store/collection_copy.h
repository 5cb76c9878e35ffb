#pragma once
// Copies a collection's documents, chunks, embeddings and sentence vectors into another collection's
// records (of the same embedder and dimension) in any back-end: how a user grows from the embedded
// SQLite default to PostgreSQL, or goes back, without embedding anything again. The target's search
// indexes are not built on the way (whoever opens it next builds them, in one batch). Each document is
// one transaction in the target; one already there with the same content (path and SHA-256) is
// skipped, so a copy that was interrupted can simply run again.

#include <cstddef>
#include <functional>

#include "core/result.h"
#include "store/collection.h"
#include "store/record_store.h"

namespace kotae::store {

struct CopyReport {
  std::size_t documents = 0;  // copied
  std::size_t skipped = 0;    // already in the target, unchanged
  std::size_t chunks = 0;     // copied
};

// `progress` (when given) is told after each document.
Result<CopyReport> copy_collection(Collection& from, RecordStore& to,
                                   const std::function<void(const CopyReport&)>& progress = {});

}  // namespace kotae::store
