#pragma once
// The web page's files, built from web/ by web/build.mjs and compiled into the server.

#include <span>
#include <string_view>

namespace kotae::server {

struct WebAsset {
  std::string_view path;  // "/" for the page itself, "/assets/..." for the rest
  std::string_view content_type;
  std::string_view body;
  std::string_view gzip_body;  // the same, gzip-compressed at build time
  std::string_view etag;       // quoted, from the body's SHA-256
};

std::span<const WebAsset> web_assets();

}  // namespace kotae::server
