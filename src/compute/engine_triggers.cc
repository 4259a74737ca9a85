// UpsertTrigger / DeleteTrigger: the checks of a trigger (tick rate,
// event sources and their filters, export names, invoke policies and
// contracts) before the store keeps it.
#include <algorithm>
#include <iterator>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/policy.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace {

using engine_internal::ModuleSlot;

bool IsExportName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// onEvent is one of kEventSources; each filter set applies to it:
// eventName (compute_event), entityType (row_created, field_changed,
// row_deleted), fieldName (field_changed), functionName (function_invoked).
Status CheckEventTrigger(const TriggerRecord& t, const std::string& on_event) {
  if (std::find(std::begin(kEventSources), std::end(kEventSources), on_event) ==
      std::end(kEventSources)) {
    return InvalidArgument("onEvent " + Quote(on_event) +
                           " is not one of compute_event, row_created, "
                           "field_changed, row_deleted, function_invoked");
  }
  const bool row = on_event == "row_created" || on_event == "row_deleted" ||
                   on_event == "field_changed";
  struct Filter {
    const char* name;
    const std::string& value;
    bool applies;
    size_t max;
  };
  const Filter filters[] = {
      {"eventName", t.event_name, on_event == "compute_event",
       compute_abi::kMaxEventNameBytes},
      {"entityType", t.entity_type, row, 64},
      {"fieldName", t.field_name, on_event == "field_changed", 64},
      {"functionName", t.function_name, on_event == "function_invoked", 257},
  };
  for (const Filter& f : filters) {
    if (f.value.empty()) continue;
    if (!f.applies) {
      return InvalidArgument(std::string(f.name) +
                             " does not apply to onEvent " + Quote(on_event));
    }
    if (f.value.size() > f.max) {
      return InvalidArgument(std::string(f.name) + " is longer than " +
                             std::to_string(f.max) + " bytes");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<TriggerRecord> ComputeEngine::UpsertTrigger(const TriggerSpec& spec) {
  Impl& e = *impl_;
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(spec.module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  TriggerRecord t;
  t.module_id = slot->id;
  t.type = spec.trigger.type;
  const Policy policy = e.CurrentPolicy();
  switch (t.type) {
    case TriggerType::kTick:
      t.tick_hz = spec.trigger.tick_hz;
      if (!(t.tick_hz > 0)) {
        return InvalidArgument("tickHz must be above 0");
      }
      if (t.tick_hz > policy.max_tick_hz) {
        return InvalidArgument("tickHz " + std::to_string(t.tick_hz) +
                               " exceeds the policy's maxTickHz (" +
                               std::to_string(policy.max_tick_hz) + ")");
      }
      break;
    case TriggerType::kEvent: {
      t.on_event = spec.trigger.on_event.empty() ? "compute_event"
                                                 : spec.trigger.on_event;
      Status filters = CheckEventTrigger(spec.trigger, t.on_event);
      if (!filters.ok()) return filters;
      t.event_name = spec.trigger.event_name;
      t.entity_type = spec.trigger.entity_type;
      t.field_name = spec.trigger.field_name;
      t.function_name = spec.trigger.function_name;
      t.debounce_ms = spec.trigger.debounce_ms;
      if (t.debounce_ms < 0 || t.debounce_ms > 3'600'000) {
        return InvalidArgument("debounceMs must be within 0..3600000");
      }
      break;
    }
    case TriggerType::kInvoke:
      t.export_name = spec.trigger.export_name;
      if (!IsExportName(t.export_name)) {
        return InvalidArgument(
            "exportName " + Quote(t.export_name) +
            " must be 1..128 of letters, digits, '_', '-' or '.'");
      }
      t.invoke_policy_json = spec.trigger.invoke_policy_json;
      if (!t.invoke_policy_json.empty()) {
        Status st = CheckInvokePolicy(t.invoke_policy_json);
        if (!st.ok()) return InvalidArgument("invokePolicy: " + st.message());
      }
      t.contract_json = spec.trigger.contract_json;
      if (!t.contract_json.empty()) {
        Result<Contract> contract = ParseContract(t.contract_json);
        if (!contract.ok()) {
          return InvalidArgument("contract: " + contract.status().message());
        }
      }
      break;
  }
  Result<TriggerRecord> stored = e.store->UpsertTrigger(t);
  if (!stored.ok()) return stored.status();
  TESSERA_RETURN_IF_ERROR(e.RefreshTriggers(*slot));
  return stored;
}

Status ComputeEngine::DeleteTrigger(std::string_view module,
                                    int64_t trigger_id) {
  Impl& e = *impl_;
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    for (const TriggerRecord& t : slot->triggers) mine |= t.id == trigger_id;
  }
  if (!mine) {
    return NotFound("module " + Quote(module) + " has no trigger " +
                    std::to_string(trigger_id));
  }
  TESSERA_RETURN_IF_ERROR(e.store->DeleteTrigger(trigger_id));
  return e.RefreshTriggers(*slot);
}

}  // namespace tessera::compute
