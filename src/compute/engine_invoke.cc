// Invoke: a module's published export called by a player or a management
// caller. Everything that can refuse the call is checked before the sandbox
// runs, in this order: the export's invoke trigger (kNotFound), its invoke
// policy (kPermissionDenied), its contract (kInvalidArgument "BAD_REQUEST:
// ..."), the kill switch, the module's state and its circuit
// (kUnavailable). The call then runs on the caller's thread under the
// module's run lock: on the loaded instance, or a short-lived one.
#include <nlohmann/json.hpp>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/flow_id.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace engine_internal {

RunResult Core::CallLocked(ModuleSlot& slot, RunRequest request,
                           const Policy& policy) {
  if (slot.loaded.alive())
    return Run(slot, slot.loaded, std::move(request), policy);
  Snapshot snap;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    snap = TakeSnapshot(slot);
  }
  RunResult failed;
  if (WantsLoaded(snap, policy)) {
    // The module should be loaded: load it here as the lease holder (its
    // task would at its next pass), then call it.
    if (!Load(slot, slot.loaded, /*lease_holder=*/true, request.flow_id,
              request.depth, policy, &failed)) {
      slot.is_loaded.store(false);
      return failed;
    }
    slot.is_loaded.store(true);
    slot.ticks.Reset(slot.loaded.loaded_at_us, snap.tick_hz);
    slot.last_tick_us = slot.loaded.loaded_at_us;
    Poke(slot);  // its task schedules the ticks of this instance
    return Run(slot, slot.loaded, std::move(request), policy);
  }
  // Not loaded (no sessions, not alwaysOn): a short-lived instance that
  // does not hold the tick lease.
  InstanceState temp;
  if (!Load(slot, temp, /*lease_holder=*/false, request.flow_id, request.depth,
            policy, &failed)) {
    return failed;
  }
  return Run(slot, temp, std::move(request), policy);
}

namespace {

Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}

std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace
}  // namespace engine_internal

Result<InvokeResult> ComputeEngine::Invoke(const InvokeRequest& request) {
  using namespace engine_internal;  // NOLINT: the engine's own helpers
  Core& e = *impl_;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (e.shut_down) return Unavailable("the compute engine has shut down");
  }
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(request.module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  std::string policy_json;
  std::shared_ptr<const Contract> contract;
  Snapshot snap;
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    for (const TriggerRecord& t : slot->triggers) {
      if (t.type == TriggerType::kInvoke &&
          t.export_name == request.export_name) {
        found = true;
        policy_json = t.invoke_policy_json;
        if (auto it = slot->contracts.find(t.id); it != slot->contracts.end()) {
          contract = it->second;
        }
        break;
      }
    }
    snap = TakeSnapshot(*slot);
  }
  if (!found) {
    return NotFound("module \"" + request.module +
                    "\" has no invoke trigger for export \"" +
                    request.export_name + "\"");
  }
  const std::string_view params = request.params_json.empty()
                                      ? std::string_view("{}")
                                      : std::string_view(request.params_json);
  if (!request.management &&
      !InvokeAllowed(policy_json, request.caller_user_id, params)) {
    return Status(StatusCode::kPermissionDenied,
                  policy_json.empty()
                      ? "export \"" + request.export_name + "\" of module \"" +
                            request.module +
                            "\" has no invoke policy: only management "
                            "callers may invoke it"
                      : "the invoke policy of export \"" + request.export_name +
                            "\" of module \"" + request.module +
                            "\" denies this caller");
  }
  if (contract != nullptr) {
    Status valid = ValidateParams(*contract, params);
    if (!valid.ok()) {
      return InvalidArgument("BAD_REQUEST: " + valid.message());
    }
  } else {
    nlohmann::json parsed = nlohmann::json::parse(params, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      return InvalidArgument("BAD_REQUEST: params must be a JSON object");
    }
  }
  const Policy policy = e.CurrentPolicy();
  if (!policy.enabled) {
    return Unavailable(
        "compute is switched off for this app (policy.enabled = false)");
  }
  if (!snap.enabled || snap.active_version == 0) {
    return Unavailable("module \"" + request.module + "\" is disabled");
  }

  RunRequest run;
  run.source = TriggerSource::kInvoke;
  run.entry = request.export_name;
  run.flow_id = IsValidFlowId(request.flow_id) ? request.flow_id : NewFlowId();
  run.input.reserve(params.size() + request.export_name.size() + 64);
  run.input += "{\"export\":";
  run.input += JsonString(request.export_name);
  run.input += ",\"params\":";
  run.input += params;
  run.input += ",\"callerUserId\":";
  run.input += JsonString(request.caller_user_id);
  run.input += '}';
  if (run.input.size() > compute_abi::kMaxInvokeInputBytes) {
    return InvalidArgument("BAD_REQUEST: the invoke input is " +
                           std::to_string(run.input.size()) +
                           " bytes, over the limit of " +
                           std::to_string(compute_abi::kMaxInvokeInputBytes));
  }

  RunResult result;
  {
    std::lock_guard<std::mutex> run_lock(slot->run_mu);
    result = e.CallLocked(*slot, std::move(run), policy);
  }
  if (result.refused) {
    std::lock_guard<std::mutex> lock(slot->mu);
    return Unavailable(
        "module \"" + request.module + "\" is failing: its circuit is " +
        CircuitStateName(slot->circuit.state()) + " after " +
        std::to_string(slot->circuit.consecutive_failures()) +
        " consecutive failures (last: " + slot->record.last_error + ")");
  }
  if (!result.outcome.ok) return RunFailure(request.module, result.outcome);
  InvokeResult out;
  out.result = std::move(result.outcome.output);
  out.result_is_json = IsJson(out.result);
  out.fuel_used = result.outcome.fuel_used;
  out.duration_us = result.outcome.duration_us;
  out.flow_id = std::move(result.flow_id);
  return out;
}

}  // namespace tessera::compute
