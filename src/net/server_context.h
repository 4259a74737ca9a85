// State shared by the server's sessions (internal to src/net): options,
// the router, the hub and its shard fan-out, the shard gateway, the clock,
// metrics, and
// the set of live WebSocket sessions that Stop() closes. Owned by Server::Impl,
// which outlives every session.
//
// Threading: immutable after Start except the atomics and what `mu` guards;
// used from every io thread.
#ifndef TESSERA_NET_SERVER_CONTEXT_H_
#define TESSERA_NET_SERVER_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/thread_annotations.h"
#include "net/http_types.h"
#include "net/hub.h"
#include "net/net_metrics.h"
#include "net/router.h"
#include "net/server.h"
#include "net/shard_fanout.h"
#include "net/shard_gateway.h"

namespace tessera::net {

struct ServerContext {
  ServerContext(const ServerOptions& options, std::string ticket_secret,
                const Router& router, ShardGateway* shards, Metrics& metrics,
                Hub& hub)
      : options(options),
        ticket_secret(std::move(ticket_secret)),
        router(router),
        shards(shards),
        clock(options.clock != nullptr ? *options.clock : *RealClock::Get()),
        wall_clock(options.wall_clock != nullptr ? *options.wall_clock
                                                 : *RealWallClock::Get()),
        metrics(metrics),
        hub(hub),
        fanout(hub, this->ticket_secret, wall_clock) {}

  // Unix seconds (ticket expiry).
  int64_t UnixNow() const { return wall_clock.UnixNowSecs(); }
  // The stop code/reason once Stop() began, else false.
  bool Stopping(int* code, std::string* reason) const;
  void BeginStop(int code, std::string reason);

  // Live WebSocket sessions (joined or not), keyed by address.
  void AddSession(const TopicSubscriber* key,
                  std::weak_ptr<TopicSubscriber> session);
  void RemoveSession(const TopicSubscriber* key);
  // Posts a close to every live session; returns how many.
  size_t CloseAllSessions(int code, const std::string& reason);
  size_t live_sessions() const { return live_sessions_.load(); }

  const ServerOptions& options;
  const std::string ticket_secret;
  const Router& router;        // filled before Start
  ShardGateway* const shards;  // null: no shard is found
  const Clock& clock;  // monotonic: the input token buckets, Stop's wait
  const WallClock& wall_clock;  // unix: ticket expiry and issue times
  NetMetrics metrics;
  Hub& hub;
  ShardFanout fanout;  // the shards' ticks and moves on `hub`
  // Ids passed to ShardGateway::SubmitInput as the seq, unique per server, so
  // each result finds the connection that sent it (client seqs are per
  // connection and may repeat across a subscriber's connections).
  std::atomic<uint64_t> next_input_id{1};

 private:
  mutable std::mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  int stop_code_ GUARDED_BY(mu_) = 0;
  std::string stop_reason_ GUARDED_BY(mu_);
  std::unordered_map<const TopicSubscriber*, std::weak_ptr<TopicSubscriber>>
      sessions_ GUARDED_BY(mu_);
  std::atomic<size_t> live_sessions_{0};
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SERVER_CONTEXT_H_
