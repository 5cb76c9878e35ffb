#pragma once
// A zip archive of stored (uncompressed) entries with correct CRC-32s, built in memory. The DOCX fuzz
// target wraps mutated XML in one, so mutations reach the DOCX reader's XML walk instead of dying on
// a broken deflate stream or checksum inside libzip.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kotae::fuzz {

inline std::uint32_t crc32(std::string_view bytes) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// entries: {name, bytes}; names and bytes under 4 GiB (fuzz inputs are far smaller).
inline std::string stored_zip(const std::vector<std::pair<std::string, std::string_view>>& entries) {
  std::string out, directory;
  const auto put = [](std::string& s, std::uint32_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  };
  for (const auto& [name, data] : entries) {
    const auto offset = static_cast<std::uint32_t>(out.size());
    const auto size = static_cast<std::uint32_t>(data.size());
    const std::uint32_t crc = crc32(data);
    put(out, 0x04034b50, 4);  // local file header
    put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 2),
        put(out, 0x21, 2);  // version, flags, stored, time, date
    put(out, crc, 4), put(out, size, 4), put(out, size, 4);
    put(out, static_cast<std::uint32_t>(name.size()), 2), put(out, 0, 2);
    out += name;
    out += data;
    put(directory, 0x02014b50, 4);  // central directory entry
    put(directory, 20, 2), put(directory, 20, 2), put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 2),
        put(directory, 0x21, 2);
    put(directory, crc, 4), put(directory, size, 4), put(directory, size, 4);
    put(directory, static_cast<std::uint32_t>(name.size()), 2), put(directory, 0, 2), put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4), put(directory, offset, 4);
    directory += name;
  }
  const auto directory_offset = static_cast<std::uint32_t>(out.size());
  out += directory;
  put(out, 0x06054b50, 4);  // end of central directory
  put(out, 0, 2), put(out, 0, 2);
  put(out, static_cast<std::uint32_t>(entries.size()), 2), put(out, static_cast<std::uint32_t>(entries.size()), 2);
  put(out, static_cast<std::uint32_t>(directory.size()), 4), put(out, directory_offset, 4), put(out, 0, 2);
  return out;
}

}  // namespace kotae::fuzz
