#pragma once
// A collection of a chosen size grown from a real one, for latency benchmarks at 10k/100k chunks.
// Real documents are repeated under new paths until the size is reached. A copy keeps its source's
// text and sentence vectors; its chunk vectors are mixtures of two random real chunk vectors (weights
// 0.3–0.7, renormalised), so they spread over the region real embeddings occupy. (Noisy copies of each
// real vector would make ~140 near-ties per chunk at 100k from ~700 real chunks; no approximate index
// orders those exactly, so recall would measure the synthetic data, not the index.)

#include <cstddef>
#include <filesystem>
#include <memory>

#include "core/result.h"
#include "store/collection.h"

namespace kotae::bench {

// Builds `target` (replacing what is there) from `source` until it holds at least `chunks` chunks,
// and saves its vector index. Deterministic for a seed.
Result<std::unique_ptr<store::Collection>> grow_collection(const store::Collection& source,
                                                           const std::filesystem::path& target, std::size_t chunks,
                                                           unsigned seed = 42);

}  // namespace kotae::bench
