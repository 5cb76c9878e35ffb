#pragma once
// Tokens a text costs for a generator whose tokenizer Kotae cannot see (a remote server, an answer
// worker's model), estimated erring high: a prompt fitted to an over-estimate stays inside the context,
// one fitted to an under-estimate gets cut or refused.

#include <cstddef>
#include <string_view>

namespace kotae {

std::size_t estimate_tokens(std::string_view text);

}  // namespace kotae
