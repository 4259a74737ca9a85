// JSON responses of the HTTP API: every error is {"code", "message"} with
// the HTTP status that fits, so clients branch on `code` and show `message`.
// Pure functions; any thread.
#ifndef TESSERA_SERVER_HTTP_JSON_H_
#define TESSERA_SERVER_HTTP_JSON_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "net/http_types.h"

namespace tessera::server {

// `value` serialised (invalid UTF-8 replaced) with `status`.
net::HttpResponse JsonResponse(int status, const nlohmann::json& value);

// {"code": code, "message": message} with `status`.
net::HttpResponse ErrorResponse(int status, std::string_view code,
                                std::string_view message);

// The HTTP status for a failed Status (400 invalid_argument, 403
// permission_denied, 404 not_found, 409 already_exists /
// failed_precondition / out_of_range / aborted, 422 refused / trap, 503
// unavailable, 429 resource_exhausted, 504 deadline_exceeded, 500
// otherwise).
int HttpStatusFor(StatusCode code);

// ErrorResponse(HttpStatusFor(code), StatusCodeName(code), message).
net::HttpResponse ErrorFromStatus(const Status& status);

// 405 method_not_allowed naming the allowed methods, with an Allow header.
net::HttpResponse MethodNotAllowed(std::string_view method,
                                   std::string_view allowed);
// 401 unauthorized for a route that needs the admin token, with a
// WWW-Authenticate header.
net::HttpResponse AdminTokenRequired();

}  // namespace tessera::server

#endif  // TESSERA_SERVER_HTTP_JSON_H_
