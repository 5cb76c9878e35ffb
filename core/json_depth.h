#pragma once
// How deep JSON text nests, known before a parser recurses into it: an attacker's "[[[[…" is refused
// for the price of one pass over its bytes.

#include <string_view>

namespace kotae {

// Whether arrays and objects in `text` nest deeper than `limit` (strings skipped); linear, no recursion.
bool nested_deeper_than(std::string_view text, int limit);

}  // namespace kotae
