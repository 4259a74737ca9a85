// Shard gauges and counters for /metrics, refreshed from ShardHost::List
// (and the directory's failed records) just before each render:
//   tessera_shards{status=starting|running|stopped|failed}   gauge
//   tessera_shard_subscribers       (of live shards)          gauge
//   tessera_shard_queued_inputs     (of live shards)          gauge
//   tessera_shard_ticks_total, tessera_shard_overruns_total,
//   tessera_shard_fuel_used_total                             counters
// The counters add each shard's progress since the previous refresh (a
// shard replaced under the same id starts from zero again), so they only
// miss what a shard did between the last scrape and its removal.
//
// Thread-safety: Refresh from any thread (serialised internally).
// `metrics` and `directory` are not owned and must outlive this.
#ifndef TESSERA_SERVER_HOST_METRICS_H_
#define TESSERA_SERVER_HOST_METRICS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "common/metrics.h"
#include "server/shard_directory.h"
#include "common/thread_annotations.h"

namespace tessera::server {

class HostMetrics {
 public:
  HostMetrics(Metrics* metrics, const ShardDirectory* directory);
  void Refresh();

 private:
  struct Seen {
    uint64_t ticks = 0;
    uint64_t overruns = 0;
    int64_t fuel = 0;
  };

  Metrics* const metrics_;
  const ShardDirectory* const directory_;
  Gauge* starting_;
  Gauge* running_;
  Gauge* stopped_;
  Gauge* failed_;
  Gauge* subscribers_;
  Gauge* queued_inputs_;
  Counter* ticks_;
  Counter* overruns_;
  Counter* fuel_;

  std::mutex mu_;
  std::map<std::string, Seen> seen_ GUARDED_BY(mu_);
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_HOST_METRICS_H_
