#pragma once
// The API's OpenAPI 3 description (server/openapi.json, compiled in), served at /openapi.json.

#include <string_view>

namespace kotae::server {

std::string_view openapi_document();

}  // namespace kotae::server
