#pragma once
// Every error the API returns: an HTTP status and a JSON body
//   {"error": {"code": "not_found", "type": "not_found", "message": "no collection 'x' ..."}}
// `code` is stable (clients branch on it); `type` repeats it where OpenAI's clients look; the message
// is for people.

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "server/http_message.h"

namespace kotae::server {

struct ApiError {
  int status = 500;
  std::string code;
  std::string message;
};

ApiError bad_request(std::string message);
// The status and code for a Result's error: invalid_argument 400, not_found 404, already_exists 409,
// overloaded 503, unsupported 501, the rest 500.
ApiError from_error(const Error& error);

// The one error envelope: {"error": {"code", "type", "message"}} (responses, stream events, task records).
nlohmann::json error_envelope(const ApiError& error);
HttpResponse json_response(int status, const nlohmann::json& body);
// The compact JSON text of `body`, invalid UTF-8 in its strings replaced (U+FFFD) rather than thrown on.
std::string json_text(const nlohmann::json& body);
HttpResponse error_response(const ApiError& error);

}  // namespace kotae::server
