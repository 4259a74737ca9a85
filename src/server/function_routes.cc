#include "server/function_routes.h"

#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include "server/compute_routes_internal.h"
#include "server/http_json.h"
#include "server/request_target.h"

namespace tessera::server {

using net::HttpRequest;
using net::HttpResponse;

FunctionRoutes::FunctionRoutes(compute::ComputeEngine& engine,
                               const ApiTokens& tokens,
                               std::string ticket_secret,
                               const WallClock& wall_clock)
    : engine_(engine),
      tokens_(tokens),
      ticket_secret_(std::move(ticket_secret)),
      wall_clock_(wall_clock) {}

HttpResponse FunctionRoutes::Handle(const HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target) {
    return ErrorResponse(400, "bad_target",
                         "the request target is not a valid path");
  }
  const std::vector<std::string>& s = target->segments;
  if (s.size() != 3 || s[0] != "api" || s[1] != "functions") {
    return ErrorResponse(404, "not_found",
                         "no route " + target->path +
                             " (functions are POST /api/functions/<name>)");
  }
  if (request.method != "POST") {
    HttpResponse r =
        ErrorResponse(405, "method_not_allowed",
                      request.method + " is not allowed here (allowed: POST)");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  // As computeInvoke: the caller first, so that nothing about the app's
  // functions is told without a token.
  compute_routes::Call call{engine_, wall_clock_, {}, {}, nullptr, false, ""};
  if (auto refused = compute_routes::AuthorizeInvoke(tokens_, ticket_secret_,
                                                     request, &call)) {
    return *refused;
  }
  std::optional<compute_routes::Query> query = ParseQuery(request.target);
  if (!query) {
    return compute_routes::BadRequest(
        "the query string has a bad escape or a parameter given twice");
  }
  call.query = std::move(*query);
  if (auto bad = compute_routes::ParseBody(request, &call)) return *bad;
  Result<compute::FunctionRef> function = engine_.ResolveFunction(s[2]);
  if (!function.ok()) return compute_routes::InvokeError(function.status());
  call.vars = {function->module, function->export_name};
  return compute_routes::Invoke(call);
}

JoinRoutes::JoinRoutes(compute::ComputeEngine& engine, const ApiTokens& tokens,
                       const std::string& ticket_secret,
                       const WallClock& wall_clock)
    : functions_(engine, tokens, ticket_secret, wall_clock) {}

std::unique_ptr<JoinRoutes> JoinRoutes::Register(
    net::Router& router, compute::ComputeEngine& engine,
    const ApiTokens& tokens, const std::string& ticket_secret, bool dev,
    const WallClock& wall_clock) {
  std::unique_ptr<JoinRoutes> routes(
      new JoinRoutes(engine, tokens, ticket_secret, wall_clock));
  router.AddHttp("/api/functions", routes->functions_);
  GuestAuthOptions guest;
  guest.ticket_secret = ticket_secret;
  guest.wall_clock = &wall_clock;
  Result<std::optional<GuestAuthOptions>> on =
      GuestAuthFromEnv(dev, std::move(guest));
  if (!on.ok()) {
    std::cerr << "tessera: " << on.status().message()
              << "; guest sign-in (POST /api/auth/guest) is off\n";
  } else if (*on) {
    routes->guest_auth_ = std::make_unique<GuestAuth>(std::move(**on));
    router.AddHttp("/api/auth/guest", *routes->guest_auth_);
  }
  return routes;
}

}  // namespace tessera::server
