// ShardService: the shards of an app server. Owns the shard host (on the
// app's kinds and store), the durable ShardDirectory, the gateway the shard
// sessions use, and the host's observers:
//
//   ShardHost --(frames, stops)--> observers: the network's (Observe: the
//                                  net::Server's fan-out), ForgetStopped
//                                  (the directory), StopNotices (onStop)
//
// It registers the tick metrics (tessera_tick_duration_seconds,
// tessera_tick_cpu_seconds) and the event counts (ShardEventMetrics: ticks,
// fuel, stops and failures by reason, moves by outcome and their time)
// when built and the shard protocol sessions under net::kShardPathPrefix
// as its route.
//
// Threading: construction, Observe, RegisterRoutes, Restore and Shutdown
// from the controlling thread, in that order; the host, the directory and
// the gateway are thread-safe (see their headers). Ownership: `kinds`,
// `store`, `notifier` and `metrics` are not owned and must outlive the
// service; observers given to Observe must outlive its Shutdown.
#ifndef TESSERA_SERVER_SHARD_SERVICE_H_
#define TESSERA_SERVER_SHARD_SERVICE_H_

#include <functional>
#include <memory>
#include <string>

#include "common/metrics.h"
#include "common/status.h"
#include "net/shard_host_gateway.h"
#include "server/service.h"
#include "server/shard_directory.h"
#include "server/stop_notices.h"
#include "server/stop_notifier.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/shard_sink.h"
#include "store/store.h"

namespace tessera::server {

struct ShardServiceOptions {
  // on_tick and on_transfer are the service's (the tick metrics and event
  // counts).
  shard::HostOptions host;
  DirectoryOptions directory;
  // One line per stop (StopLog), on the worker; must not block. Null: not
  // logged.
  std::function<void(const std::string&)> stop_log;
};

class ShardService final : public Service {
 public:
  ShardService(const shard::KindRegistry& kinds, store::Store* store,
               StopNotifier& notifier, Metrics& metrics,
               ShardServiceOptions options);
  // Shutdown().
  ~ShardService() override;

  // Adds an observer of the host, told of each event before the directory
  // and onStop; before Restore (the host's first shard).
  void Observe(shard::ShardSink& observer) { network_.Add(&observer); }

  // Shard sessions under net::kShardPathPrefix.
  void RegisterRoutes(net::Router& router) override;

  // Starts every shard of the directory again, one line to `log` per
  // shard that did not start (ShardDirectory::RestoreAll), then recovers
  // the moves between shards a crash interrupted
  // (ShardHost::RecoverTransfers; its kIo error is returned).
  Result<RestoreReport> Restore(
      const std::function<void(const std::string&)>& log);

  // Stops ticking and saves every shard (ShardHost::Shutdown). Idempotent.
  shard::ShardHost::ShutdownReport Shutdown() { return host_.Shutdown(); }

  shard::ShardHost& host() { return host_; }
  ShardDirectory& directory() { return directory_; }
  net::ShardGateway& gateway() { return gateway_; }

 private:
  // Declaration order is construction order: the observers before the
  // host that reports to them, the host before what refers to it.
  shard::ShardObservers network_;
  shard::ShardObservers observers_;  // network_, forget_, notices_, log_
  ShardEventMetrics events_;         // ticks, fuel, stops, failures
  shard::ShardHost host_;
  ShardDirectory directory_;
  ForgetStopped forget_;
  StopNotices notices_;
  StopLog stop_log_;
  net::ShardHostGateway gateway_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_SHARD_SERVICE_H_
