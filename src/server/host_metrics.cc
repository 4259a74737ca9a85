#include "server/host_metrics.h"

#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::server {
namespace {

constexpr char kShardsHelp[] = "Shards on this server by status.";
constexpr char kStopsHelp[] = "Shards stopped, by reason.";
constexpr char kFailuresHelp[] =
    "Shards failed, by the kind of their failure line (fuel, watchdog, "
    "tick_budget, memory, panic, trap, abi, error, host, other).";

}  // namespace

ShardEventMetrics::ShardEventMetrics(Metrics* metrics) : metrics_(metrics) {
  ticks_ = metrics_->GetCounter("tessera_shard_ticks_total",
                                "Ticks run by all shards.");
  fuel_ = metrics_->GetCounter(
      "tessera_shard_fuel_used_total",
      "Fuel (guest instructions) used by all shards' ticks and saves.");
  overruns_ = metrics_->GetCounter(
      "tessera_shard_overruns_total",
      "Ticks that started a whole period late (the schedule skipped ahead).");
}

void ShardEventMetrics::OnTick(int64_t fuel_used, bool overrun) {
  ticks_->Add();
  if (fuel_used > 0) fuel_->Add(static_cast<uint64_t>(fuel_used));
  if (overrun) overruns_->Add();
}

void ShardEventMetrics::OnStopped(shard::StopReason reason,
                                  std::string_view message) {
  // Few labels, each created once: the registry lookup is cheap enough for
  // a stop.
  metrics_
      ->GetCounter("tessera_shard_stops_total", kStopsHelp,
                   {{"reason", shard::StopReasonName(reason)}})
      ->Add();
  if (reason == shard::StopReason::kFailed) {
    metrics_
        ->GetCounter("tessera_shard_failures_total", kFailuresHelp,
                     {{"reason", FailureKind(message)}})
        ->Add();
  }
}

const char* ShardEventMetrics::FailureKind(std::string_view line) {
  // The prefixes of GuestShard's failure lines (shard/guest_shard.h).
  static constexpr std::pair<std::string_view, const char*> kKinds[] = {
      {"fuel exhausted:", "fuel"},
      {"watchdog:", "watchdog"},
      {"tick budget:", "tick_budget"},
      {"memory:", "memory"},
      {"panic:", "panic"},
      {"trap:", "trap"},
      {"abi:", "abi"},
      {"error:", "error"},
      {"host:", "host"},
  };
  for (const auto& [prefix, kind] : kKinds) {
    if (line.starts_with(prefix)) return kind;
  }
  return "other";
}

HostMetrics::HostMetrics(Metrics* metrics, const ShardDirectory* directory)
    : metrics_(metrics), directory_(directory) {
  starting_ = metrics_->GetGauge("tessera_shards", kShardsHelp,
                                 {{"status", "starting"}});
  running_ = metrics_->GetGauge("tessera_shards", kShardsHelp,
                                {{"status", "running"}});
  stopped_ = metrics_->GetGauge("tessera_shards", kShardsHelp,
                                {{"status", "stopped"}});
  failed_ =
      metrics_->GetGauge("tessera_shards", kShardsHelp, {{"status", "failed"}});
  subscribers_ = metrics_->GetGauge(
      "tessera_shard_subscribers",
      "Subscribers of all shards (a subscriber of two shards counts twice).");
  queued_inputs_ = metrics_->GetGauge("tessera_shard_queued_inputs",
                                      "Inputs waiting for their shard's tick.");
}

void HostMetrics::Refresh() {
  const std::vector<shard::ShardInfo> shards = directory_->host()->List();
  const std::vector<store::ShardRecord> failed = directory_->FailedRecords();
  std::set<std::string, std::less<>> failed_ids;
  for (const store::ShardRecord& r : failed) failed_ids.insert(r.id);

  int64_t starting = 0, running = 0, stopped = 0, subscribers = 0, queued = 0;
  for (const shard::ShardInfo& info : shards) {
    switch (info.status) {
      case shard::ShardStatus::kStarting:
        ++starting;
        break;
      case shard::ShardStatus::kRunning:
        ++running;
        break;
      case shard::ShardStatus::kStopped:
        // A refused restore is counted once, as failed.
        if (!failed_ids.contains(info.id)) ++stopped;
        break;
    }
    if (info.status != shard::ShardStatus::kStopped) {
      subscribers += static_cast<int64_t>(info.subscribers);
      queued += static_cast<int64_t>(info.queued_inputs);
    }
  }
  starting_->Set(starting);
  running_->Set(running);
  stopped_->Set(stopped);
  failed_->Set(static_cast<int64_t>(failed.size()));
  subscribers_->Set(subscribers);
  queued_inputs_->Set(queued);
}

}  // namespace tessera::server
