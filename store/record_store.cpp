#include "store/record_store.h"

#include <nlohmann/json.hpp>

namespace kotae::store {

std::string heading_path_json(const std::vector<std::string>& heading_path) {
  return nlohmann::json(heading_path).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kotae::store
