// Shard metrics for /metrics.
//
// ShardEventMetrics counts as things happen, so a shard that stops and is
// forgotten keeps what it did in the totals:
//   tessera_shard_ticks_total                 (HostOptions::on_tick)
//   tessera_shard_fuel_used_total             (on_tick's fuel; init not
//                                              included)
//   tessera_shard_overruns_total              (on_tick's overrun flag)
//   tessera_shard_stops_total{reason=stopped|idle|finished|failed}
//   tessera_shard_failures_total{reason=fuel|watchdog|tick_budget|memory|
//       panic|trap|abi|error|host|other}      (ShardSink::OnStopped; the
//                                              kind of the failure line)
//   tessera_shard_transfers_total{outcome=moved|shard_transfer_refused|
//       shard_not_found|...}                  (HostOptions::on_transfer:
//                                              "moved" or the lower-case
//                                              TransferErrorCode)
//   tessera_shard_transfer_seconds            histogram: from the request
//                                              to the target's commit (or
//                                              the refusal)
// HostMetrics refreshes gauges from ShardHost::List and the directory's
// failed records just before each render:
//   tessera_shards{status=starting|running|stopped|failed}   gauge
//   tessera_shard_subscribers       (of live shards)          gauge
//   tessera_shard_queued_inputs     (of live shards)          gauge
// and brings the host's message counters (ShardHost::talk_counters, totals
// since the host started) up to date:
//   tessera_shard_messages_sent_total       messages modules and the server
//                                           sent (outbox, POST /api/publish)
//   tessera_shard_messages_delivered_total  given to a target's on_message
//   tessera_shard_messages_refused_total{reason=topic|too_big|rate|
//       not_found|no_handler|inbox_full|stopped}   per target
//
// Thread-safety: ShardEventMetrics from any thread (lock-free counters);
// Refresh from any thread. `metrics` and
// `directory` are not owned and must outlive these.
#ifndef TESSERA_SERVER_HOST_METRICS_H_
#define TESSERA_SERVER_HOST_METRICS_H_

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "common/metrics.h"
#include "common/thread_annotations.h"
#include "server/shard_directory.h"
#include "shard/shard_types.h"
#include "shard/talk_types.h"

namespace tessera::server {

class ShardEventMetrics {
 public:
  explicit ShardEventMetrics(Metrics* metrics);

  // One tick ran (a failing one too), used `fuel_used` and started a whole
  // period late when `overrun`.
  void OnTick(int64_t fuel_used, bool overrun);
  // A shard stopped; for kFailed, `message` is its failure line.
  void OnStopped(shard::StopReason reason, std::string_view message);
  // A move finished (moved or not) `duration_us` after it was asked for.
  void OnTransfer(const shard::TransferResult& result, int64_t duration_us);

  // The failure-kind label of a failure line ("panic: boom" -> "panic").
  static const char* FailureKind(std::string_view failure_line);

 private:
  Metrics* const metrics_;
  Counter* ticks_;
  Counter* fuel_;
  Counter* overruns_;
  Histogram* transfer_seconds_;
};

class HostMetrics {
 public:
  HostMetrics(Metrics* metrics, const ShardDirectory* directory);
  void Refresh();

 private:
  Metrics* const metrics_;
  const ShardDirectory* const directory_;
  Gauge* starting_;
  Gauge* running_;
  Gauge* stopped_;
  Gauge* failed_;
  Gauge* subscribers_;
  Gauge* queued_inputs_;
  // The message counters and the host's totals they were last brought to.
  static constexpr size_t kRefusals = 7;  // MessageRefusal's values
  Counter* sent_;
  Counter* delivered_;
  std::array<Counter*, kRefusals> refused_;
  std::mutex mu_;
  uint64_t seen_sent_ GUARDED_BY(mu_) = 0;
  uint64_t seen_delivered_ GUARDED_BY(mu_) = 0;
  std::array<uint64_t, kRefusals> seen_refused_ GUARDED_BY(mu_) = {};
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_HOST_METRICS_H_
