#pragma once
// Many batcher requests answered as one: each part reports with part(i, result), on whichever thread
// answers it; when the last has, `done` gets every part in order (or the first failure), on that
// last thread.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/result.h"

namespace kotae::batch {

template <class T>
std::function<void(std::size_t, Result<T>)> gather(std::size_t parts,
                                                   std::function<void(Result<std::vector<T>>)> done) {
  struct State {
    std::mutex mutex;
    std::vector<std::optional<T>> values;
    std::size_t left = 0;
    std::optional<Error> failure;
    std::function<void(Result<std::vector<T>>)> done;
  };
  auto state = std::make_shared<State>();
  state->values.resize(parts);
  state->left = parts;
  state->done = std::move(done);
  if (parts == 0) state->done(std::vector<T>{});
  return [state](std::size_t i, Result<T> result) {
    std::unique_lock lock(state->mutex);
    if (!result) {
      if (!state->failure) state->failure = result.error();
    } else {
      state->values[i] = std::move(*result);
    }
    if (--state->left > 0) return;
    lock.unlock();
    if (state->failure) return state->done(*state->failure);
    std::vector<T> all;
    all.reserve(state->values.size());
    for (auto& v : state->values) all.push_back(std::move(*v));
    state->done(std::move(all));
  };
}

}  // namespace kotae::batch
