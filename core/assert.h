#pragma once
// Internal invariants. A failed KOTAE_ASSERT is a bug in Kotae, never a user's mistake, so it stops the
// process with the location instead of travelling as an error (user errors use Result<T>).

#include <cstdio>
#include <cstdlib>

#define KOTAE_ASSERT(cond)                                                                            \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      std::fprintf(stderr, "kotae: internal error: %s failed at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                                   \
    }                                                                                                 \
  } while (0)
