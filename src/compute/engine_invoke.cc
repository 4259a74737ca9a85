// Invoke: a module's published export called by a player or a management
// caller. Everything that can refuse the call is checked before the sandbox
// runs, in this order: the export's invoke trigger (kNotFound), its invoke
// policy (kPermissionDenied), its contract (kInvalidArgument "BAD_REQUEST:
// ..."), the kill switch, the module's state and its circuit
// (kUnavailable). The call then runs on the caller's thread under the
// module's run lock: on the loaded instance, or a short-lived one. A module
// importing data runs in a transaction taken before that lock: its own
// (Invoke) or the caller's (InvokeInTxn).
#include <nlohmann/json.hpp>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/flow_id.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace engine_internal {

RunResult Core::CallLocked(ModuleSlot& slot, RunRequest request,
                           const Policy& policy, DataScope* scope) {
  if (slot.loaded.alive())
    return Run(slot, slot.loaded, std::move(request), policy, scope);
  Snapshot snap;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    snap = TakeSnapshot(slot);
  }
  // The init before the call shares the call's transaction: in a
  // savepoint (undone when init fails), its effects carried to the call's
  // commit.
  DataScope init_scope;
  DataScope* for_init = scope;
  bool savepoint = false;
  if (scope != nullptr && scope->txn != nullptr) {
    init_scope.txn = scope->txn;
    init_scope.out = &scope->carried;
    for_init = &init_scope;
    savepoint = scope->txn->Savepoint().ok();
  }
  auto finish_init = [&](bool ok) {
    if (!savepoint) return;
    if (ok) {
      (void)scope->txn->Release();
    } else {
      (void)scope->txn->RollbackTo();
    }
  };
  RunResult failed;
  if (WantsLoaded(snap, policy)) {
    // The module should be loaded: load it here as the lease holder (its
    // task would at its next pass), then call it.
    if (!Load(slot, slot.loaded, /*lease_holder=*/true, request.flow_id,
              request.depth, policy, &failed, for_init)) {
      finish_init(false);
      slot.is_loaded.store(false);
      return failed;
    }
    finish_init(true);
    slot.is_loaded.store(true);
    slot.ticks.Reset(slot.loaded.loaded_at_us, snap.tick_hz);
    slot.last_tick_us = slot.loaded.loaded_at_us;
    Poke(slot);  // its task schedules the ticks of this instance
    return Run(slot, slot.loaded, std::move(request), policy, scope);
  }
  // Not loaded (no sessions, not alwaysOn): a short-lived instance that
  // does not hold the tick lease.
  InstanceState temp;
  if (!Load(slot, temp, /*lease_holder=*/false, request.flow_id, request.depth,
            policy, &failed, for_init)) {
    finish_init(false);
    return failed;
  }
  finish_init(true);
  return Run(slot, temp, std::move(request), policy, scope);
}

namespace {

Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}

std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The function_invoked event of a committed invoke (docs/compute-abi.md
// "Events").
EmittedEvent InvokedEvent(const InvokeRequest& request,
                          const std::string& flow_id) {
  EmittedEvent e;
  e.on_event = "function_invoked";
  e.name = e.on_event;
  e.function = request.module + "." + request.export_name;
  e.export_name = request.export_name;
  e.flow_id = flow_id;
  e.depth = 1;
  nlohmann::json payload = {{"function", e.function},
                            {"module", request.module},
                            {"export", request.export_name},
                            {"callerUserId", request.caller_user_id},
                            {"callerShardId", request.caller_shard_id},
                            {"flowId", flow_id}};
  e.payload =
      payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return e;
}

}  // namespace

Result<InvokeResult> Core::DoInvoke(const InvokeRequest& request,
                                    data::DataTxn* txn,
                                    Deferred::Effects* deferred) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return Unavailable("the compute engine has shut down");
  }
  Result<std::shared_ptr<ModuleSlot>> required = Require(request.module);
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
  const Policy policy = CurrentPolicy();
  if (!policy.enabled) {
    return Unavailable(
        "compute is switched off for this app (policy.enabled = false)");
  }
  if (snap.active_version == 0 && snap.compiling) {
    return Unavailable("module \"" + request.module +
                       "\" has no version to run yet: its first version is "
                       "still compiling");
  }
  if (!snap.enabled || snap.active_version == 0) {
    return Unavailable("module \"" + request.module + "\" is disabled");
  }

  RunRequest run;
  run.source = TriggerSource::kInvoke;
  run.entry = request.export_name;
  run.flow_id = IsValidFlowId(request.flow_id) ? request.flow_id : NewFlowId();
  run.input.reserve(params.size() + request.export_name.size() + 96);
  run.input += "{\"export\":";
  run.input += JsonString(request.export_name);
  run.input += ",\"params\":";
  run.input += params;
  run.input += ",\"callerUserId\":";
  run.input += JsonString(request.caller_user_id);
  run.input += ",\"callerShardId\":";
  run.input += JsonString(request.caller_shard_id);
  run.input += '}';
  if (run.input.size() > compute_abi::kMaxInvokeInputBytes) {
    return InvalidArgument("BAD_REQUEST: the invoke input is " +
                           std::to_string(run.input.size()) +
                           " bytes, over the limit of " +
                           std::to_string(compute_abi::kMaxInvokeInputBytes));
  }

  // The transaction, before the run lock: the caller's, or our own when
  // the module imports data.
  DataScope scope;
  DataScope* use = nullptr;
  Deferred::Effects nested;
  if (txn != nullptr) {
    scope.txn = txn;
    scope.out = &nested;
    use = &scope;
  } else if (NeedsTxn(*slot, policy)) {
    TESSERA_RETURN_IF_ERROR(BeginScope(&scope, /*wait_ms=*/5000));
    use = &scope;
  }
  const std::string flow_id = run.flow_id;
  RunResult result;
  {
    std::lock_guard<std::mutex> run_lock(slot->run_mu);
    result = CallLocked(*slot, std::move(run), policy, use);
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
  out.flow_id = result.flow_id.empty() ? flow_id : std::move(result.flow_id);
  if (txn != nullptr) {
    nested.events.emplace_back(request.module,
                               InvokedEvent(request, out.flow_id));
    deferred->Append(std::move(nested));
  } else if (data_triggers.load(std::memory_order_relaxed) > 0) {
    std::vector<EmittedEvent> events;
    events.push_back(InvokedEvent(request, out.flow_id));
    Dispatch(request.module, std::move(events));
  }
  return out;
}

}  // namespace engine_internal

Result<InvokeResult> ComputeEngine::Invoke(const InvokeRequest& request) {
  return impl_->DoInvoke(request, nullptr, nullptr);
}

Result<InvokeResult> ComputeEngine::InvokeInTxn(data::DataTxn& txn,
                                                const InvokeRequest& request,
                                                Deferred* deferred) {
  if (deferred == nullptr) {
    return InvalidArgument("InvokeInTxn needs a Deferred to fill");
  }
  if (deferred->effects_ == nullptr) {
    deferred->effects_ = std::make_unique<Deferred::Effects>();
  }
  return impl_->DoInvoke(request, &txn, deferred->effects_.get());
}

}  // namespace tessera::compute
