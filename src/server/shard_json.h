// The JSON shapes of the admin API's shard views (docs in api_handler.h).
// Pure functions; any thread.
#ifndef TESSERA_SERVER_SHARD_JSON_H_
#define TESSERA_SERVER_SHARD_JSON_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shard/shard_host.h"
#include "shard/shard_types.h"
#include "store/store.h"

namespace tessera::server {

// {"codec", "tick_rate", "tick_budget_ms", "memory_mb", "fuel_per_tick",
//  "max_run_ms", "idle_shutdown_secs", "on_stop"}
nlohmann::json LimitsJson(const shard::KindConfig& config);

// {"id", "kind", "status", "tick", "subscribers"}; `failed` (the
// directory's failed record, if any) turns the status into "failed".
nlohmann::json SummaryJson(const shard::ShardInfo& info, bool failed);
// The summary of a failed record the host no longer lists.
nlohmann::json SummaryJson(const store::ShardRecord& failed);

// The summary plus "subscriber_ids", "limits" (null for an unknown kind),
// "fuel_used", "overruns", "queued_inputs", "stop_reason" (null while
// running), "stop_message", "last_error" (null if none). `info` or `failed`
// (or both) must be set; `failed`'s error wins as last_error.
nlohmann::json DetailJson(const std::optional<shard::ShardInfo>& info,
                          const std::optional<store::ShardRecord>& failed,
                          const shard::KindConfig* limits,
                          const std::vector<std::string>& subscriber_ids);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_SHARD_JSON_H_
