// Request targets' query strings and percent-decoding (server/url.h), which every request goes through
// before routing. Decoding never grows the text, and a query without escapes or '+' keeps its names.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/assert.h"
#include "server/url.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  KOTAE_ASSERT(kotae::server::percent_decode(input, false).size() <= input.size());
  KOTAE_ASSERT(kotae::server::percent_decode(input, true).size() <= input.size());
  const auto query = kotae::server::parse_query(input);
  KOTAE_ASSERT(query.size() <= input.size() / 2 + 1);
  if (input.find_first_of("%+") == std::string_view::npos) {
    for (const auto& [name, value] : query) KOTAE_ASSERT(input.find(name) != std::string_view::npos);
  }
  return 0;
}
