// The app's functions over HTTP (docs/protocol.md "Functions"):
//
//   POST /api/functions/<name> {params?}  invokes the function <name>
//       ("module.export", or a bare export that exactly one module has an
//       invoke trigger for: ComputeEngine::ResolveFunction) exactly as
//       POST /api/compute/modules/<module>/invoke/<export> would: the same
//       bearer auth (a manage_compute token, or a signed ticket such as a
//       guest's whose subscriber is the caller), the same 200 reply
//       {resultJson | resultBase64, fuelUsed, durationUs, flowId} and the
//       same errors; an unknown function is 404 not_found
//       ("FUNCTION_NOT_FOUND: ..."), an ambiguous bare name 400 BAD_REQUEST.
//       A join function returns {shardId, subscriberId, ticket}.
//
// JoinRoutes owns that handler and guest sign-in (guest_auth.h), both
// registered by ComputeService::RegisterRoutes.
//
// Threading: Handle from any thread (the engine is thread-safe).
#ifndef TESSERA_SERVER_FUNCTION_ROUTES_H_
#define TESSERA_SERVER_FUNCTION_ROUTES_H_

#include <memory>
#include <string>

#include "common/clock.h"
#include "compute/engine.h"
#include "net/http_types.h"
#include "net/router.h"
#include "server/api_tokens.h"
#include "server/guest_auth.h"

namespace tessera::server {

class FunctionRoutes final : public net::HttpHandler {
 public:
  // Not owned: `engine`, `tokens` and `wall_clock` must outlive this.
  FunctionRoutes(compute::ComputeEngine& engine, const ApiTokens& tokens,
                 std::string ticket_secret, const WallClock& wall_clock);

  net::HttpResponse Handle(const net::HttpRequest& request) override;

 private:
  compute::ComputeEngine& engine_;
  const ApiTokens& tokens_;
  const std::string ticket_secret_;
  const WallClock& wall_clock_;
};

// The functions route and guest sign-in of one app server.
class JoinRoutes {
 public:
  // Adds POST /api/functions/ and, when guest sign-in is on (`dev`, or
  // TESSERA_GUEST_AUTH=on: GuestAuthFromEnv), POST /api/auth/guest to
  // `router`. Reads the environment: call before starting threads. A bad
  // TESSERA_GUEST_AUTH* value is reported on stderr and leaves guest
  // sign-in off. The returned object must outlive the router's use.
  static std::unique_ptr<JoinRoutes> Register(net::Router& router,
                                              compute::ComputeEngine& engine,
                                              const ApiTokens& tokens,
                                              const std::string& ticket_secret,
                                              bool dev,
                                              const WallClock& wall_clock);

  FunctionRoutes& functions() { return functions_; }
  GuestAuth* guest_auth() { return guest_auth_.get(); }  // null: off

 private:
  JoinRoutes(compute::ComputeEngine& engine, const ApiTokens& tokens,
             const std::string& ticket_secret, const WallClock& wall_clock);

  FunctionRoutes functions_;
  std::unique_ptr<GuestAuth> guest_auth_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_FUNCTION_ROUTES_H_
