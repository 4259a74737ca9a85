// Where the server sends what arrives on its port: a WebSocket upgrade to
// a path under a registered prefix ("/shard/" now, "/realm/" next) runs a
// session from that prefix's factory with the rest of the path (one
// percent-encoded resource id); every other request goes to the HTTP
// handler of the longest registered HTTP prefix ("/": the app's API, static
// files and metrics). An upgrade to no session prefix is an HTTP request.
//
// Threading: filled by the composition root (each service registering its
// own routes) before Server::Start, then only read, from every io thread.
// Handlers and factories are not owned and must outlive the server.
#ifndef TESSERA_NET_ROUTER_H_
#define TESSERA_NET_ROUTER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_types.h"

namespace tessera::net {

// Runs one kind of WebSocket session (see session_factory.h; internal to
// src/net, where the Beast types live). The shard protocol's: ShardSessions().
class SessionFactory;

// The factory of the shard protocol session (docs/protocol.md).
const SessionFactory& ShardSessions();

// The shard sessions' path prefix.
inline constexpr char kShardPathPrefix[] = "/shard/";

class Router {
 public:
  // Upgrades to `prefix` + <id> (prefix starting and ending with '/') run
  // `factory`; the longest matching prefix wins.
  void AddSession(std::string prefix, const SessionFactory& factory);
  // Requests whose path is `prefix` or below it ("/" for every path) go to
  // `handler`; the longest matching prefix wins.
  void AddHttp(std::string prefix, HttpHandler& handler);

  // The session factory for an upgrade to `path` (without the query) and
  // the rest of the path after its prefix (still percent-encoded), or null.
  const SessionFactory* FindSession(std::string_view path,
                                    std::string_view* rest) const;
  // The HTTP handler for `path`, or null (the server answers 404).
  HttpHandler* FindHttp(std::string_view path) const;

 private:
  std::vector<std::pair<std::string, const SessionFactory*>> sessions_;
  std::vector<std::pair<std::string, HttpHandler*>> http_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_ROUTER_H_
