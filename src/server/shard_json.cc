#include "server/shard_json.h"

#include "server/codec_json.h"
#include "server/shard_directory.h"

namespace tessera::server {

using json = nlohmann::json;

namespace {

json NullIfEmpty(const std::string& text) {
  return text.empty() ? json(nullptr) : json(text);
}

}  // namespace

json LimitsJson(const shard::KindConfig& config) {
  return json{{"codec", CodecName(config.codec)},
              {"tick_rate", config.tick_rate},
              {"tick_budget_ms", config.tick_budget_ms},
              {"memory_mb", config.memory_mb},
              {"fuel_per_tick", config.fuel_per_tick},
              {"max_run_ms", config.max_run_ms},
              {"idle_shutdown_secs", config.idle_shutdown_secs},
              {"on_stop", NullIfEmpty(config.on_stop)}};
}

json SummaryJson(const shard::ShardInfo& info, bool failed) {
  return json{
      {"id", info.id},
      {"kind", info.kind},
      {"status", failed ? kRecordFailed : shard::ShardStatusName(info.status)},
      {"tick", info.tick},
      {"subscribers", info.subscribers}};
}

json SummaryJson(const store::ShardRecord& failed) {
  return json{{"id", failed.id},
              {"kind", failed.kind},
              {"status", kRecordFailed},
              {"tick", 0},
              {"subscribers", 0}};
}

json DetailJson(const std::optional<shard::ShardInfo>& info,
                const std::optional<store::ShardRecord>& failed,
                const shard::KindConfig* limits,
                const std::vector<std::string>& subscriber_ids) {
  json out =
      info ? SummaryJson(*info, failed.has_value()) : SummaryJson(*failed);
  out["subscriber_ids"] = subscriber_ids;
  out["limits"] = limits != nullptr ? LimitsJson(*limits) : json(nullptr);
  out["fuel_used"] = info ? info->fuel_used : 0;
  out["overruns"] = info ? info->overruns : 0;
  out["queued_inputs"] = info ? info->queued_inputs : 0;
  // The build of the module it runs (a hot reload changes it).
  out["module"] = info ? NullIfEmpty(info->module_version) : json(nullptr);
  json stop_reason = nullptr;
  if (failed) {
    stop_reason = shard::StopReasonName(shard::StopReason::kFailed);
  } else if (info && info->stop_reason != shard::StopReason::kNone) {
    stop_reason = shard::StopReasonName(info->stop_reason);
  }
  out["stop_reason"] = stop_reason;
  out["stop_message"] = info ? NullIfEmpty(info->stop_message) : json(nullptr);
  out["last_error"] =
      failed ? json(failed->error) : NullIfEmpty(info->last_error);
  return out;
}

}  // namespace tessera::server
