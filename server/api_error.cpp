#include "server/api_error.h"

namespace kotae::server {

ApiError bad_request(std::string message) {
  return {400, "invalid_request", std::move(message)};
}

ApiError from_error(const Error& error) {
  switch (error.code) {
    case ErrorCode::invalid_argument: return {400, "invalid_request", error.message};
    case ErrorCode::not_found: return {404, "not_found", error.message};
    case ErrorCode::already_exists: return {409, "already_exists", error.message};
    case ErrorCode::overloaded: return {503, "overloaded", error.message};
    case ErrorCode::stopped: return {503, "stopped", error.message};
    case ErrorCode::unavailable: return {503, "unavailable", error.message};
    case ErrorCode::unsupported: return {501, "unsupported", error.message};
    case ErrorCode::io: return {500, "io_error", error.message};
    case ErrorCode::corrupt: return {500, "corrupt_data", error.message};
    case ErrorCode::model: return {500, "model_error", error.message};
    case ErrorCode::internal: return {500, "internal", error.message};
  }
  return {500, "internal", error.message};
}

std::string json_text(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse json_response(int status, const nlohmann::json& body) {
  return {status, "application/json", json_text(body), {}};
}

nlohmann::json error_envelope(const ApiError& error) {
  return {{"error", {{"code", error.code}, {"type", error.code}, {"message", error.message}}}};
}

HttpResponse error_response(const ApiError& error) {
  auto response = json_response(error.status, error_envelope(error));
  if (error.status == 503 || error.status == 429) response.headers.emplace_back("Retry-After", "1");
  return response;
}

}  // namespace kotae::server
