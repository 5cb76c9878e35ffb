#pragma once
// What a caller who is not an admin may see of the server's own configuration: model and back-end
// names, never the filesystem paths or upstream URLs inside them (they tell an attacker where the data
// lives and which internal hosts the server reaches).

#include <string>
#include <string_view>

namespace kotae::server {

// `text` with every URL (scheme://...) replaced by "<url>" and every absolute path by "<path>".
std::string redact_locations(std::string_view text);

}  // namespace kotae::server
