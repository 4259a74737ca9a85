// The realms of the app (docs/realms.md "Serving"): the realm store, the
// worker pool and RealmHost that serve the manifest's realm kinds, the
// WebSocket route /realm/<kind>/<key> and the HTTP routes under
// /api/realms:
//
//   GET  /api/realms                         (admin) the kinds, live instances
//   POST /api/realms/<kind>/<key>/tickets    (admin) {subscriber, ttlSecs?,
//                                            claims?} -> {ticket, url}
//   POST /api/realms/<kind>/<key>/join       (tessera dev only, no token)
//                                            {subscriber?} -> {ticket,
//                                            subscriber, url}
//   POST /api/realms/<kind>/<key>/update     (admin) {patch: [ops]} ->
//                                            {version}: the server's update
//                                            path, unchecked by the rules
//   GET  /api/realms/<kind>/<key>/alarms     (admin) {alarms: [{name,
//                                            dueUnixMs, failures}]}
//
// Threading: Handle from any io thread; Start and Shutdown from the
// composition root.
#ifndef TESSERA_SERVER_REALM_SERVICE_H_
#define TESSERA_SERVER_REALM_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "guest/worker_pool.h"
#include "net/http_types.h"
#include "net/realm_sessions.h"
#include "realm/host.h"
#include "realm/kind.h"
#include "realm/realm_store.h"
#include "server/service.h"

namespace tessera::compute {
class ComputeEngine;
}

namespace tessera::server {

class ModuleRealmHooks;

struct RealmServiceOptions {
  std::string admin_token;
  std::string ticket_secret;
  bool dev = false;  // serve .../join
  // The deployment's floor (TESSERA_REALM_SECURITY): raises every kind's.
  realm::SecurityFloor floor = realm::SecurityFloor::kAuthenticated;
  int workers = 1;
  std::function<void(const std::string&)> log;
  const WallClock* wall_clock = nullptr;  // null: the real one
  Metrics* metrics = nullptr;             // not owned; null: not counted
  // Runs the kinds' modules (realm_module.h). Not owned; null: none.
  compute::ComputeEngine* engine = nullptr;
};

class RealmService final : public Service, public net::HttpHandler {
 public:
  // Opens the realm store of `database_url` (only when a kind is durable)
  // and starts the host. Errors: the store's.
  static Result<std::unique_ptr<RealmService>> Start(
      std::vector<realm::RealmKindConfig> kinds,
      const std::string& database_url, RealmServiceOptions options);
  ~RealmService() override;

  void RegisterRoutes(net::Router& router) override;
  net::HttpResponse Handle(const net::HttpRequest& request) override;

  // Commits what is queued and closes every realm connection (1001).
  void Shutdown();

  realm::RealmHost& host() { return *host_; }

 private:
  RealmService(std::vector<realm::RealmKindConfig> kinds,
               std::unique_ptr<realm::RealmStore> store,
               RealmServiceOptions options);
  net::HttpResponse Update(const net::HttpRequest& request,
                           const std::string& kind, const std::string& key);
  net::HttpResponse Alarms(const std::string& kind, const std::string& key);
  net::HttpResponse Ticket(const net::HttpRequest& request,
                           const std::string& kind, const std::string& key,
                           bool dev_join);

  const RealmServiceOptions options_;
  std::vector<std::string> kind_names_;
  std::unique_ptr<realm::RealmStore> store_;
  std::unique_ptr<ModuleRealmHooks> hooks_;
  std::unique_ptr<guest::WorkerPool> pool_;
  std::unique_ptr<realm::RealmHost> host_;
  std::unique_ptr<net::RealmSessions> sessions_;
};

// TESSERA_REALM_SECURITY: "authenticated" (the default) or "encrypted".
Result<realm::SecurityFloor> RealmFloorFromEnv();

}  // namespace tessera::server

#endif  // TESSERA_SERVER_REALM_SERVICE_H_
