// The network front: one port serving WebSocket sessions at /shard/<id>
// (protocol v1, docs/protocol.md) and every other HTTP request through an
// HttpHandler. Implemented with Boost.Beast/Asio (kept to few translation
// units: they are slow to compile).
//
// It is the shard host's ShardSink (frames and stops flow from workers to
// connections) and implements Connections for the admin API.
//
// Threading: Start/Stop from one controlling thread; the ShardSink and
// Connections methods from any thread (they post to the io threads).
#ifndef TESSERA_NET_SERVER_H_
#define TESSERA_NET_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/metrics.h"
#include "common/status.h"
#include "net/connections.h"
#include "net/http_types.h"
#include "shard/shard_sink.h"

namespace tessera::shard {
class ShardHost;
}

namespace tessera::net {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 4321;  // 0: an ephemeral port (see Server::port())
  int io_threads = 1;
  size_t max_message_bytes = 64 * 1024;
  double input_rate_per_sec = 100;
  double input_burst = 200;
  int max_strikes = 10;
  int64_t hello_timeout_ms = 10000;
  int64_t ping_interval_ms = 5000;
  // Returns the current unix time in seconds (ticket expiry); null: system.
  std::function<int64_t()> unix_now;
};

class Server final : public shard::ShardSink, public Connections {
 public:
  // `http`, `metrics` are not owned and must outlive the server.
  Server(ServerOptions options, std::string ticket_secret, HttpHandler* http,
         Metrics* metrics);
  ~Server() override;

  // The host whose shards connections join; set before Start. Not owned.
  void SetHost(shard::ShardHost* host);

  // Binds and starts the io threads. Errors: kIo (e.g. port in use).
  Status Start();
  uint16_t port() const;
  // Closes every connection with `code`/`reason`, stops accepting and joins
  // the io threads. Idempotent.
  void Stop(int code = kCloseGoingAway,
            std::string_view reason = "server shutting down");

  // shard::ShardSink
  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs) override;
  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;

  // Connections
  size_t CloseSubscriber(std::string_view shard_id,
                         std::string_view subscriber, int code,
                         std::string_view reason) override;
  size_t CloseShard(std::string_view shard_id, int code,
                    std::string_view reason) override;
  std::vector<std::string> Subscribers(
      std::string_view shard_id) const override;
  size_t ConnectionCount() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SERVER_H_
