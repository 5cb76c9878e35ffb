#include "server/tei_api.h"

namespace kotae::server {

HttpResponse tei_error(int status, const std::string& error_type, const std::string& message) {
  return json_response(status, {{"error", message}, {"error_type", error_type}});
}

HttpResponse tei_error(const ApiError& error) {
  if (error.code == "empty") return tei_error(400, "Empty", error.message);
  if (error.status == 400) return tei_error(422, "Validation", error.message);
  if (error.status == 429 || error.code == "overloaded") return tei_error(429, "Overloaded", error.message);
  if (error.status == 503) return tei_error(503, "Unhealthy", error.message);
  if (error.status >= 400 && error.status < 500)
    return tei_error(error.status, "Validation", error.message);  // 404, 413, 415
  return tei_error(424, "Backend", error.message);
}

Handler tei_errors(Handler handler) {
  return [handler = std::move(handler)](Call& call) {
    try {
      handler(call);
    } catch (const ApiError& error) {
      call.responder->send(tei_error(error));
    }
  };
}

}  // namespace kotae::server
