#pragma once
// A tenant's name, as keys, tokens, proxies and X-Kotae-Tenant give it: it names folders and rows, so
// only letters, digits, '_' and '-', at most 64.

#include <string_view>

namespace kotae::server {

inline bool valid_tenant(std::string_view t) {
  return !t.empty() && t.size() <= 64 &&
         t.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
             std::string_view::npos;
}

}  // namespace kotae::server
