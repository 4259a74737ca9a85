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

// Monitoring (compute_monitor_routes.cc).
HttpResponse Runs(Call& c);
HttpResponse Logs(Call& c);
HttpResponse Stats(Call& c);
HttpResponse Diagnostics(Call& c);
HttpResponse Usage(Call& c);

}  // namespace tessera::server::compute_routes

#endif  // TESSERA_SERVER_COMPUTE_ROUTES_INTERNAL_H_
