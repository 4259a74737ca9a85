// The rules every ComputeStore backend shares (memory_compute_store.h,
// store/sqlite_compute_store.h, store/postgres/pg_compute_store.h), so
// they answer alike: list limits, the usage minute, trigger keys and the
// error messages.
#ifndef TESSERA_COMPUTE_COMPUTE_STORE_RULES_H_
#define TESSERA_COMPUTE_COMPUTE_STORE_RULES_H_

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "compute/compute_types.h"

namespace tessera::compute {

// ListRuns / ListLogs return at most this many rows whatever the filter's
// limit; a limit <= 0 (in any List* call taking one) returns no rows.
inline constexpr int64_t kMaxListLimit = 1000;

inline int64_t ClampListLimit(int64_t limit) {
  return std::clamp<int64_t>(limit, 0, kMaxListLimit);
}

// A usage row's minute: minute_ms floored to a multiple of 60000.
inline int64_t UsageMinute(int64_t minute_ms) {
  int64_t q = minute_ms / 60'000;
  if (minute_ms % 60'000 != 0 && minute_ms < 0) --q;
  return q * 60'000;
}

// The identity of a trigger within its module: "tick" (one per module),
// "invoke/<export_name>", "event/<len>:<on_event>/<event_name>" for
// compute_event, and for data events "event/<len>:<on_event>/" then
// "<len>:<entity_type>/<len>:<field_name>/<function_name>" (the length
// prefixes keep any names apart): an event trigger is keyed by its event
// and its filters.
inline std::string TriggerKey(const TriggerRecord& trigger) {
  switch (trigger.type) {
    case TriggerType::kTick:
      return "tick";
    case TriggerType::kInvoke:
      return "invoke/" + trigger.export_name;
    case TriggerType::kEvent: {
      std::string key = "event/" + std::to_string(trigger.on_event.size()) +
                        ":" + trigger.on_event + "/";
      if (trigger.on_event == "compute_event") return key + trigger.event_name;
      return key + std::to_string(trigger.entity_type.size()) + ":" +
             trigger.entity_type + "/" +
             std::to_string(trigger.field_name.size()) + ":" +
             trigger.field_name + "/" + trigger.function_name;
    }
  }
  return "tick";
}

inline Status NoComputeModule(int64_t module_id) {
  return NotFound("no compute module with id " + std::to_string(module_id));
}
inline Status NoComputeModuleNamed(const std::string& name) {
  return NotFound("no compute module named '" + name + "'");
}
inline Status NoComputeVersion(int64_t module_id, int64_t version_no) {
  return NotFound("compute module " + std::to_string(module_id) +
                  " has no version " + std::to_string(version_no));
}
inline Status NoComputeTrigger(int64_t trigger_id) {
  return NotFound("no compute trigger with id " + std::to_string(trigger_id));
}
// SetState by a non-holder whose expected revision is no longer stored.
inline Status StaleComputeState(int64_t module_id, int64_t stored,
                                int64_t expected) {
  return Status(StatusCode::kAborted,
                "state of compute module " + std::to_string(module_id) +
                    " is at revision " + std::to_string(stored) +
                    ", not the expected revision " + std::to_string(expected));
}

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_COMPUTE_STORE_RULES_H_
