#pragma once
// Base64 (RFC 4648, with padding) for the tests' e-mails: attachments as a mail client encodes them.

#include <cstdint>
#include <string>
#include <string_view>

namespace kotae::testing {

inline std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t at = 0; at < bytes.size(); at += 3) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) << 16;
    if (at + 1 < bytes.size()) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 8;
    if (at + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[at + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += at + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += at + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
    if (at % 57 == 54) out += "\r\n";  // 76 characters a line
  }
  return out;
}

}  // namespace kotae::testing
