#include "server/shard_service.h"

#include <string_view>
#include <utility>

#include "net/server.h"

namespace tessera::server {
namespace {

shard::HostOptions WithTickMetrics(shard::HostOptions options, Metrics& metrics,
                                   ShardEventMetrics& events) {
  Histogram* tick_seconds = metrics.GetHistogram(
      "tessera_tick_duration_seconds",
      "Wall time of one shard tick: inputs, tick and snapshot.",
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
       0.25});
  Histogram* tick_cpu_seconds = metrics.GetHistogram(
      "tessera_tick_cpu_seconds",
      "Thread CPU time of one shard tick (the tickBudgetMs measure).",
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
       0.25});
  options.on_tick = [tick_seconds, tick_cpu_seconds, counts = &events](
                        std::string_view, const shard::TickEvent& tick) {
    tick_seconds->Observe(static_cast<double>(tick.wall_us) / 1e6);
    tick_cpu_seconds->Observe(static_cast<double>(tick.cpu_us) / 1e6);
    counts->OnTick(tick.fuel_used, tick.overrun);
  };
  options.on_transfer = [counts = &events](const shard::TransferResult& result,
                                           int64_t duration_us) {
    counts->OnTransfer(result, duration_us);
  };
  return options;
}

}  // namespace

ShardService::ShardService(const shard::KindRegistry& kinds,
                           store::Store* store, StopNotifier& notifier,
                           Metrics& metrics, ShardServiceOptions options)
    : events_(&metrics),
      host_(&kinds, &observers_, store,
            WithTickMetrics(std::move(options.host), metrics, events_)),
      directory_(&host_, &kinds, store, std::move(options.directory)),
      forget_(directory_),
      notices_(host_, kinds, notifier),
      stop_log_(host_, std::move(options.stop_log), &events_),
      gateway_(host_, net::FindKindIn(&kinds)) {
  // The order the old single sink had: the network first, then the
  // directory, then onStop.
  observers_.Add(&network_);
  observers_.Add(&forget_);
  observers_.Add(&notices_);
  observers_.Add(&stop_log_);
}

ShardService::~ShardService() { Shutdown(); }

void ShardService::RegisterRoutes(net::Router& router) {
  router.AddSession(net::kShardPathPrefix, net::ShardSessions());
}

Result<RestoreReport> ShardService::Restore(
    const std::function<void(const std::string&)>& log) {
  Result<RestoreReport> restored = directory_.RestoreAll(log);
  if (!restored.ok()) return restored;
  // The moves a crash interrupted: once the shards they left are back.
  Status recovered = host_.RecoverTransfers();
  if (!recovered.ok()) return recovered;
  return restored;
}

}  // namespace tessera::server
