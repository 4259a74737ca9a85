// The network front: one port whose WebSocket upgrades and HTTP requests
// go where a Router says (router.h): the shard protocol v1 sessions
// (docs/protocol.md) under "/shard/", every other request to the app's
// HttpHandler. Implemented with Boost.Beast/Asio (kept to few translation
// units: they are slow to compile).
//
// Its shards() (ShardConnections, shard_fanout.h) is the observer of the
// shard host (frames and stops flow from workers through the hub, as
// messages on the topic "shard/<id>", to connections) and the admin API's
// Connections; the sessions reach the shards through a ShardGateway.
//
// Threading: Start/Stop from one controlling thread; the ShardSink and
// Connections methods from any thread (they post to the io threads).
//
// Lifetime and wiring (leaf-first): the host and its gateway, the Router;
// the Server with both; register shards() with the host's
// shard::ShardObservers and the services' routes, all before the host's
// first shard and Start (server/app_server.cc; the tests wire the same
// way). At the end: the host object must stay alive until Stop() returns
// (closing sessions unregister from it; calling host.Shutdown() before or after
// Stop is fine), and the server must outlive the host's workers (destroy or
// Shutdown the host first). Frames arriving after Stop are dropped.
#ifndef TESSERA_NET_SERVER_H_
#define TESSERA_NET_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "net/connections.h"
#include "net/http_types.h"
#include "net/router.h"
#include "shard/shard_sink.h"
#include "shard/shard_types.h"

namespace tessera::shard {
class KindRegistry;
}  // namespace tessera::shard

namespace tessera::net {

class ShardConnections;
class ShardGateway;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 4321;  // 0: an ephemeral port (see Server::port())
  int io_threads = 1;
  size_t max_message_bytes = 64 * 1024;
  double input_rate_per_sec = 100;
  double input_burst = 200;
  int max_strikes = 10;
  int64_t hello_timeout_ms = 10000;
  int64_t ping_interval_ms = 5000;  // PING messages (docs/protocol.md)
  // WebSocket ping control frames that measure each connection's round
  // trip for lag compensation (docs/protocol.md "View tick and lag
  // compensation"); 0: none, and the round trip stays unknown.
  int64_t ws_ping_interval_ms = 1000;
  // A connection that sent nothing for this long (no message, and no pong
  // to those pings) is closed with 4015 "unresponsive" (docs/protocol.md
  // "Closing"); 0: never. Needs the pings on.
  int64_t ws_silence_timeout_ms = 30000;
  // Unix time of ticket expiry; null: RealWallClock. Not owned; must
  // outlive the server.
  const WallClock* wall_clock = nullptr;
  // Monotonic time of the connections' input token buckets, their round
  // trips and of Stop's wait for closing connections (stop_timeout_ms: on a
  // clock that does not move, Stop waits until every connection has
  // closed); null: RealClock. Not owned; must outlive the server.
  const Clock* clock = nullptr;
  // The config of a shard kind by name: WELCOME's tick rate and codec. Null,
  // or nullopt for a kind: KindConfig's defaults. Called on io threads. See
  // FindKindIn.
  std::function<std::optional<shard::KindConfig>(std::string_view kind)>
      find_kind;
  // Frames that may wait unsent for one connection; a client that lets more
  // queue up (it does not read) is closed with 1008 "too slow".
  size_t max_queued_frames = 64;
  // How long a closing connection may take to answer the close frame before
  // its TCP connection is dropped.
  int64_t close_timeout_ms = 2000;
  // How long Stop() waits for connections to close before dropping them.
  int64_t stop_timeout_ms = 3000;
  // SO_SNDBUF of accepted connections; 0 keeps the kernel's autotuning
  // (which lets one connection buffer up to net.ipv4.tcp_wmem's maximum).
  int socket_send_buffer_bytes = 0;
  // One readable line per player joining or leaving a shard (tessera dev
  // prints them); null: none. Called on io threads; must not block.
  std::function<void(const std::string&)> lifecycle_log;
  size_t max_http_body_bytes = 1 << 20;  // larger request bodies: 413
  int64_t http_idle_timeout_ms = 30000;  // idle keep-alive connections
  // The WebTransport port (UDP; docs/protocol.md "WebTransport") serving
  // the shard sessions at /shard/<id> with a development certificate made
  // at Start; -1: off, 0: an ephemeral port.
  int webtransport_port = -1;
};

// A ServerOptions::find_kind reading `kinds` (not owned; must outlive the
// server).
std::function<std::optional<shard::KindConfig>(std::string_view kind)>
FindKindIn(const shard::KindRegistry* kinds);

class Server final {
 public:
  // Serves what `router` routes (filled before Start); sessions reach the
  // shards through `shards` (null: no shard is found). `router`, `shards`
  // and `metrics` are not owned and must outlive the server; a null
  // `metrics` uses a private registry.
  Server(ServerOptions options, std::string ticket_secret, const Router& router,
         ShardGateway* shards, Metrics* metrics);
  ~Server();

  // Binds and starts the io threads. Errors: kIo (e.g. port in use),
  // kFailedPrecondition if already started or stopped.
  Status Start();
  // The bound port (after Start).
  uint16_t port() const;
  // Closes every connection with `code`/`reason`, stops accepting and joins
  // the io threads. Idempotent.
  void Stop(int code = kCloseGoingAway,
            std::string_view reason = "server shutting down");

  // The WebTransport port once started, else 0.
  uint16_t webtransport_port() const;
  // SHA-256 of the WebTransport certificate (32 bytes; empty when off),
  // for the browser's serverCertificateHashes.
  std::string webtransport_cert_sha256() const;

  // The network's observer of the shard host and the admin API's
  // Connections; lives as long as the server.
  ShardConnections& shards();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SERVER_H_
