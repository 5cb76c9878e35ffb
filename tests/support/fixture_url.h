#pragma once
// The URL a CTest fixture wrote for the tests that need its server (tests/support/postgres_server,
// redis_server): the file's first line, empty when there is none.

#include <fstream>
#include <string>

namespace kotae::testing {

inline std::string fixture_url(const char* url_file) {
  std::ifstream file(url_file);
  std::string url;
  std::getline(file, url);
  return url;
}

}  // namespace kotae::testing
