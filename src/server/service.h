// A subsystem of the app server (shards now; compute functions and realms
// next). Each is built leaf-first with what it needs in its constructor,
// registers its own metrics there (it takes the Metrics registry), and
// registers its own routes on the network's Router, so the composition
// root (app_server.cc) adds a subsystem by constructing it and calling
// RegisterRoutes before the server starts.
#ifndef TESSERA_SERVER_SERVICE_H_
#define TESSERA_SERVER_SERVICE_H_

#include "net/router.h"

namespace tessera::server {

class Service {
 public:
  virtual ~Service() = default;
  // Adds this subsystem's sessions and HTTP handlers; before Server::Start.
  // What is registered must live as long as the service.
  virtual void RegisterRoutes(net::Router& router) = 0;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_SERVICE_H_
