#include "server/http_json.h"

#include <string>

namespace tessera::server {

using json = nlohmann::json;

net::HttpResponse JsonResponse(int status, const json& value) {
  net::HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return response;
}

net::HttpResponse ErrorResponse(int status, std::string_view code,
                                std::string_view message) {
  return JsonResponse(status, json{{"code", std::string(code)},
                                   {"message", std::string(message)}});
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted:
    case StatusCode::kOutOfRange:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kRefused:
    case StatusCode::kTrap:
      return 422;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kIo:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

net::HttpResponse ErrorFromStatus(const Status& status) {
  return ErrorResponse(HttpStatusFor(status.code()),
                       StatusCodeName(status.code()), status.message());
}

net::HttpResponse MethodNotAllowed(std::string_view method,
                                   std::string_view allowed) {
  net::HttpResponse r = ErrorResponse(
      405, "method_not_allowed",
      std::string(method) +
          " is not allowed here (allowed: " + std::string(allowed) + ")");
  r.headers.emplace_back("Allow", std::string(allowed));
  return r;
}

net::HttpResponse AdminTokenRequired() {
  net::HttpResponse r = ErrorResponse(
      401, "unauthorized",
      "this route needs the admin token: Authorization: Bearer <token>");
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

}  // namespace tessera::server
