#include "server/host_metrics.h"

#include <algorithm>
#include <cctype>
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
constexpr char kTransfersHelp[] =
    "Moves of players between shards, by outcome (moved, or the lower-case "
    "error code).";
constexpr char kRefusedHelp[] = "Messages between shards refused, by reason.";

// "moved", or the error code in lower case ("shard_transfer_refused").
std::string TransferOutcome(shard::TransferError error) {
  if (error == shard::TransferError::kNone) return "moved";
  std::string code = shard::TransferErrorCode(error);
  for (char& c : code) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return code;
}

// Adds what `total` grew by since `seen` to `counter`.
void CatchUp(Counter* counter, uint64_t total, uint64_t& seen) {
  if (total > seen) counter->Add(total - seen);
  seen = std::max(seen, total);
}

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
  // Listed at 0 before the first move.
  metrics_->GetCounter("tessera_shard_transfers_total", kTransfersHelp,
                       {{"outcome", "moved"}});
  transfer_seconds_ = metrics_->GetHistogram(
      "tessera_shard_transfer_seconds",
      "Time of one move of a player between shards, from the request to "
      "the target's commit (or the refusal).",
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
       10});
}

void ShardEventMetrics::OnTransfer(const shard::TransferResult& result,
                                   int64_t duration_us) {
  metrics_
      ->GetCounter("tessera_shard_transfers_total", kTransfersHelp,
                   {{"outcome", TransferOutcome(result.error)}})
      ->Add();
  transfer_seconds_->Observe(static_cast<double>(duration_us) / 1e6);
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
  sent_ = metrics_->GetCounter(
      "tessera_shard_messages_sent_total",
      "Messages between shards sent: taken from modules' outboxes or "
      "published by the server (POST /api/publish).");
  delivered_ = metrics_->GetCounter(
      "tessera_shard_messages_delivered_total",
      "Messages between shards given to a target module's on_message.");
  for (size_t i = 0; i < kRefusals; ++i) {
    refused_[i] = metrics_->GetCounter(
        "tessera_shard_messages_refused_total", kRefusedHelp,
        {{"reason",
          shard::MessageRefusalName(static_cast<shard::MessageRefusal>(i))}});
  }
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

  const shard::ShardHost::TalkCounters talk =
      directory_->host()->talk_counters();
  std::lock_guard<std::mutex> lock(mu_);
  CatchUp(sent_, talk.messages_sent, seen_sent_);
  CatchUp(delivered_, talk.messages_delivered, seen_delivered_);
  for (size_t i = 0; i < kRefusals; ++i) {
    CatchUp(refused_[i], talk.messages_refused[i], seen_refused_[i]);
  }
}

}  // namespace tessera::server
