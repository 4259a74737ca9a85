// Private to the compute API's route files (compute_routes.cc, the
// management and invoke handlers and the route table;
// compute_monitor_routes.cc, the monitoring handlers): one request as the
// handlers see it and the checks every handler shares.
#ifndef TESSERA_SERVER_COMPUTE_ROUTES_INTERNAL_H_
#define TESSERA_SERVER_COMPUTE_ROUTES_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "compute/engine.h"
#include "net/http_types.h"
#include "server/api_tokens.h"
#include "server/compute_json.h"

namespace tessera::server::compute_routes {

using json = nlohmann::json;
using net::HttpResponse;
using Query = std::map<std::string, std::string>;

enum class Need { kView, kManage, kInvoke };

// One request as the handlers see it.
struct Call {
  compute::ComputeEngine& engine;
  const WallClock& clock;
  std::vector<std::string> vars;  // the path's variable segments, in order
  Query query;
  json body;                // an object (PUT/POST), else null
  bool management = false;  // invoke: a manage_compute token
  std::string caller_user_id;
};

using Handler = HttpResponse (*)(Call&);

HttpResponse BadRequest(const std::string& message);
// The engine's error as the API's JSON error.
HttpResponse Engine(const Status& status);
// Refuses query parameters not in `known`.
std::optional<HttpResponse> CheckQuery(
    const Call& c, std::initializer_list<std::string_view> known);
// An integer query parameter in [min, max], `fallback` when absent; else
// nullopt with `*error` set.
std::optional<int64_t> IntParam(const Call& c, const char* name,
                                int64_t fallback, int64_t min, int64_t max,
                                HttpResponse* error);
// The "module" query parameter, if given.
std::optional<std::string> ModuleParam(const Call& c);
// Module names by id, for rows that carry only the id.
Result<ModuleNames> Names(compute::ComputeEngine& engine);

// Shared with the functions route (function_routes.cc), in
// compute_routes.cc:
// The invoke caller (a manage_compute token: `call->management`; else a
// signed ticket of any resource: `call->caller_user_id`), or the 401/403
// reply. Tickets are checked against `call->clock`.
std::optional<HttpResponse> AuthorizeInvoke(const ApiTokens& tokens,
                                            std::string_view ticket_secret,
                                            const net::HttpRequest& request,
                                            Call* call);
// The request's body into `call->body` (an empty body: {}), or the 400
// reply when it is not a JSON object.
std::optional<HttpResponse> ParseBody(const net::HttpRequest& request,
                                      Call* call);
// computeInvoke: export vars[1] of module vars[0] with the body's
// {params}; the result JSON, or InvokeError.
HttpResponse Invoke(Call& c);
// An invoke's (or a function lookup's) error as the API's JSON error.
HttpResponse InvokeError(const Status& status);

// Monitoring (compute_monitor_routes.cc).
HttpResponse Runs(Call& c);
HttpResponse Logs(Call& c);
HttpResponse Stats(Call& c);
HttpResponse Diagnostics(Call& c);
HttpResponse Usage(Call& c);

}  // namespace tessera::server::compute_routes

#endif  // TESSERA_SERVER_COMPUTE_ROUTES_INTERNAL_H_
