#include "server/address_range.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace kotae::server {
namespace {

// The address as 16 bytes (IPv4 mapped into IPv6), and whether it was IPv4.
std::optional<std::pair<std::array<std::uint8_t, 16>, bool>> bytes_of(std::string_view text) {
  if (text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string address(text);
  std::array<std::uint8_t, 16> out{};
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, &v4, 4);
    return std::pair{out, true};
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    std::memcpy(out.data(), &v6, 16);
    return std::pair{out, false};
  }
  return std::nullopt;
}

}  // namespace

std::optional<AddressRange> AddressRange::parse(std::string_view cidr) {
  const auto slash = cidr.find('/');
  const auto parsed = bytes_of(cidr.substr(0, slash));
  if (!parsed) return std::nullopt;
  const auto& [bytes, v4] = *parsed;
  int prefix = v4 ? 32 : 128;
  if (slash != std::string_view::npos) {
    const auto digits = cidr.substr(slash + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (ec != std::errc() || end != digits.data() + digits.size() || prefix < 0 || prefix > (v4 ? 32 : 128))
      return std::nullopt;
  }
  AddressRange range;
  range.bytes_ = bytes;
  range.prefix_ = v4 ? prefix + 96 : prefix;
  return range;
}

bool AddressRange::contains(std::string_view address) const {
  const auto parsed = bytes_of(address);
  if (!parsed) return false;
  const auto& bytes = parsed->first;
  for (int bit = 0; bit < prefix_; ++bit) {
    const int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((bytes[byte] & mask) != (bytes_[byte] & mask)) return false;
  }
  return true;
}

}  // namespace kotae::server
