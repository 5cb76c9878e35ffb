#include "core/random_id.h"

#include <openssl/rand.h>

#include <cstdio>
#include <stdexcept>

namespace kotae {

std::string random_id(const char* prefix) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("the system's random number generator failed");
  std::string out = prefix;
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    out += hex;
  }
  return out;
}

}  // namespace kotae
