#pragma once
// An address range given as CIDR ("10.0.0.0/8", "fd00::/8", or one address), and whether a client's
// address is in it: which peers are the trusted authenticating proxy (--trusted-proxy).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kotae::server {

class AddressRange {
 public:
  // Nothing when `cidr` is not an IPv4 or IPv6 address with an optional prefix length.
  static std::optional<AddressRange> parse(std::string_view cidr);
  // Whether `address` (as the server saw the peer: "192.0.2.7", "::1", "::ffff:192.0.2.7") is in it.
  bool contains(std::string_view address) const;

 private:
  std::array<std::uint8_t, 16> bytes_{};  // IPv4 as IPv4-mapped IPv6
  int prefix_ = 0;                        // of the 128 bits
};

}  // namespace kotae::server
