// One run of a module's entry call: the circuit's admission, the call's
// limits, the host calls it makes (egress budgets, the state revision guard,
// events, NOTIFY, logs), and what is recorded (a run row or usage only, log
// lines, counters, the circuit's new state). Also loading and unloading an
// instance of the active version.
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/flow_id.h"
#include "data/schema.h"
#include "tessera/compute_abi.h"
#include "wasm/loader.h"

namespace tessera::compute::engine_internal {
namespace {

namespace abi = compute_abi;

// The host side of one run.
class RunCalls final : public HostCalls {
 public:
  RunCalls(Core& core, ModuleSlot& slot, InstanceState& inst,
           const RunRequest& request, const Policy& policy, DataScope* scope)
      : core_(core),
        slot_(slot),
        inst_(inst),
        request_(request),
        policy_(policy),
        scope_(scope),
        flow_id_(request.flow_id) {}

  int64_t NowMs() override { return core_.wall->UnixNowMs(); }

  // The OS CSPRNG (getrandom; std::random_device, which reads it too,
  // should the call be unavailable).
  void FillRandom(std::span<uint8_t> out) override {
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = getrandom(out.data() + done, out.size() - done, 0);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno != EINTR) {
        std::random_device rd;
        for (; done < out.size(); ++done) {
          out[done] = static_cast<uint8_t>(rd());
        }
      }
    }
  }

  HostCallResult GetState(std::string* bytes) override {
    if (!DataOp()) return DataOpsError();
    ++data_reads_;
    Result<StateBlob> blob = core_.store->GetState(slot_.id);
    if (!blob.ok()) {
      return HostCallResult::Error(abi::kErrUnavailable,
                                   "state_get: " + blob.status().message());
    }
    inst_.known_revision = blob->revision;
    if (blob->revision == 0) {
      return HostCallResult::Error(abi::kErrNoState, "no state blob yet");
    }
    *bytes = std::move(blob->bytes);
    return HostCallResult::Ok(static_cast<int32_t>(bytes->size()));
  }

  HostCallResult SetState(std::string_view bytes) override {
    if (!DataOp()) return DataOpsError();
    ++data_writes_;
    Result<int64_t> rev = core_.store->SetState(
        slot_.id, bytes, inst_.known_revision, inst_.lease_holder);
    if (rev.ok()) {
      inst_.known_revision = *rev;
      return HostCallResult::Ok();
    }
    if (rev.status().code() != StatusCode::kAborted) {
      return HostCallResult::Error(abi::kErrUnavailable,
                                   "state_set: " + rev.status().message());
    }
    int64_t now_rev = -1;
    if (Result<StateBlob> blob = core_.store->GetState(slot_.id); blob.ok()) {
      now_rev = blob->revision;
    }
    std::string line =
        "state_set refused: the tick-lease holder persisted revision " +
        std::to_string(now_rev) + " after this instance read revision " +
        std::to_string(inst_.known_revision);
    AddLog(abi::kLogWarn, line);
    return HostCallResult::Error(abi::kErrStale, line);
  }

  HostCallResult EmitEvent(std::string_view name,
                           std::string_view payload) override {
    if (request_.depth >= static_cast<int>(abi::kMaxEventDepth)) {
      return HostCallResult::Error(
          abi::kErrDepth, "emit_event: this run is at event depth " +
                              std::to_string(request_.depth) +
                              ", the cascade limit (" +
                              std::to_string(abi::kMaxEventDepth) + ")");
    }
    EmittedEvent e;
    e.name = std::string(name);
    e.payload = std::string(payload);
    e.flow_id = flow_id();
    e.depth = request_.depth + 1;
    events_.push_back(std::move(e));
    return HostCallResult::Ok();
  }

  HostCallResult EmitChannel(std::string_view channel,
                             std::string_view payload) override {
    std::string why;
    if (!Charge(payload.size(), &why)) {
      return HostCallResult::Error(abi::kErrEgressBudget, why);
    }
    if (core_.options.notify == nullptr) return Sent(payload.size(), 0);
    Notification note{slot_.name, channel, payload, flow_id()};
    HostCallResult r = core_.options.notify->NotifyChannel(note);
    if (r.code < 0) return r;
    return Sent(payload.size(), r.code);
  }

  HostCallResult EmitSpatial(std::string_view shard, float x, float y,
                             float radius, std::string_view payload) override {
    std::string why;
    if (!Charge(payload.size(), &why)) {
      return HostCallResult::Error(abi::kErrEgressBudget, why);
    }
    if (core_.options.notify == nullptr) return Sent(payload.size(), 0);
    Notification note{slot_.name, "spatial", payload, flow_id()};
    HostCallResult r =
        core_.options.notify->NotifySpatial(shard, x, y, radius, note);
    if (r.code < 0) return r;
    return Sent(payload.size(), r.code);
  }

  HostCallResult Data(std::string_view op, std::string_view request,
                      std::string* reply) override {
    if (core_.options.data == nullptr) {
      return HostCallResult::Error(abi::kErrUnavailable,
                                   "data: this server has no app data");
    }
    if (scope_ == nullptr || scope_->txn == nullptr) {
      // The version changed between the choice of a transaction and the
      // call: the next call has one.
      return HostCallResult::Error(
          abi::kErrUnavailable,
          "data: this call has no data transaction (the module's version "
          "changed as it started); try again");
    }
    if (!DataOp()) {
      HostCallResult r = DataOpsError();
      r.code_name = data::codes::kDataOps;
      return r;
    }
    if (!schema_) schema_ = core_.options.data->schema();
    int kind = 0;
    HostCallResult r =
        engine_internal::DataOp(*scope_->txn, *schema_, op, request,
                                "module:" + slot_.name, reply, &kind);
    if (kind == 1) ++data_reads_;
    if (kind == 2) ++data_writes_;
    return r;
  }

  HostCallResult Shards(std::string_view op, std::string_view request,
                        std::string* reply) override {
    if (core_.options.shards == nullptr) {
      return HostCallResult::Error(abi::kErrUnavailable,
                                   "shards: this server runs no shards for "
                                   "compute modules");
    }
    return ShardsOp(*core_.options.shards, op, request, reply, &effects_,
                    slot_.id, slot_.name, flow_id());
  }

  void Log(int level, std::string_view text) override { AddLog(level, text); }

  const std::string& flow_id() {
    if (flow_id_.empty()) flow_id_ = NewFlowId();
    return flow_id_;
  }
  bool has_flow_id() const { return !flow_id_.empty(); }

  std::vector<LogRecord>& logs() { return logs_; }
  std::vector<EmittedEvent>& events() { return events_; }
  Deferred::Effects& effects() { return effects_; }
  int64_t egress_msgs() const { return egress_msgs_; }
  int64_t egress_bytes() const { return egress_bytes_; }
  int64_t data_reads() const { return data_reads_; }
  int64_t data_writes() const { return data_writes_; }

 private:
  // State reads and writes are the module's host data operations for the
  // per-call cap (maxDbOpsPerTick); the app's data API adds its own.
  bool DataOp() {
    return data_reads_ + data_writes_ < policy_.max_db_ops_per_tick;
  }
  HostCallResult DataOpsError() const {
    return HostCallResult::Error(
        abi::kErrDataOps,
        "this call made " + std::to_string(data_reads_ + data_writes_) +
            " host data operations, the policy's maxDbOpsPerTick");
  }

  bool Charge(size_t bytes, std::string* why) {
    slot_.egress.SetLimits(policy_.max_egress_msgs_per_min,
                           policy_.max_egress_bytes_per_min);
    if (slot_.egress.Charge(core_.wall->UnixNowMs(),
                            static_cast<int64_t>(bytes), why)) {
      return true;
    }
    core_.c_egress_refused.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  HostCallResult Sent(size_t bytes, int32_t reached) {
    ++egress_msgs_;
    egress_bytes_ += static_cast<int64_t>(bytes);
    return HostCallResult::Ok(reached);
  }

  void AddLog(int level, std::string_view text) {
    LogRecord log;
    log.module_id = slot_.id;
    log.ts_ms = core_.wall->UnixNowMs();
    log.level = level;
    log.message = std::string(text);
    log.source = request_.source;
    log.flow_id = flow_id();
    if (core_.options.forward_log) {
      core_.options.forward_log(slot_.name, level, text);
    }
    logs_.push_back(std::move(log));
  }

  Core& core_;
  ModuleSlot& slot_;
  InstanceState& inst_;
  const RunRequest& request_;
  const Policy& policy_;
  DataScope* const scope_;
  std::optional<data::DataSchema> schema_;  // read at the first data op
  std::string flow_id_;
  std::vector<LogRecord> logs_;
  std::vector<EmittedEvent> events_;
  Deferred::Effects effects_;  // sends and publishes: after the commit
  int64_t egress_msgs_ = 0, egress_bytes_ = 0;
  int64_t data_reads_ = 0, data_writes_ = 0;
};

CallOutcome Failed(std::string error, std::string stop_kind = "") {
  CallOutcome out;
  out.error = std::move(error);
  out.instance_dead = true;
  out.stop_kind = std::move(stop_kind);
  return out;
}

Result<std::vector<uint8_t>> ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path.string());
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  return bytes;
}

}  // namespace

Result<std::shared_ptr<const wasm::CompiledModule>> Core::Compiled(
    ModuleSlot& slot, int64_t version_no, int64_t memory_mb) {
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    if (slot.compiled && slot.compiled_version == version_no &&
        slot.compiled_memory_mb == memory_mb) {
      return slot.compiled;
    }
  }
  Result<VersionRecord> version = store->GetVersion(slot.id, version_no);
  if (!version.ok()) return version.status();
  if (version->status != CompileStatus::kSucceeded) {
    return Status(StatusCode::kFailedPrecondition,
                  "version " + std::to_string(version_no) + " is " +
                      CompileStatusName(version->status));
  }
  Result<std::vector<uint8_t>> bytes = ReadFileBytes(version->artifact_path);
  if (!bytes.ok()) return bytes.status();
  wasm::LoadOptions load;
  load.check = ComputeCheckOptions(static_cast<uint32_t>(memory_mb));
  load.cache_dir = options.cache_dir.string();
  load.c_compiler = options.c_compiler;
  Result<std::shared_ptr<const wasm::CompiledModule>> module =
      wasm::LoadModule(*bytes, load);
  if (!module.ok()) return module.status();
  std::lock_guard<std::mutex> lock(slot.mu);
  slot.compiled = *module;
  slot.compiled_version = version_no;
  slot.compiled_memory_mb = memory_mb;
  return *module;
}

void Core::Unload(ModuleSlot& slot) {
  std::lock_guard<std::mutex> run(slot.run_mu);
  slot.loaded.instance.reset();
  slot.loaded.version_no = 0;
  slot.is_loaded.store(false);
}

bool Core::Load(ModuleSlot& slot, InstanceState& inst, bool lease_holder,
                const std::string& flow_id, int depth, const Policy& policy,
                RunResult* failed, DataScope* scope) {
  int64_t version_no = 0;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    version_no = slot.record.active_version;
  }
  inst.instance.reset();
  inst.version_no = version_no;
  inst.memory_mb = policy.max_memory_mb;
  inst.lease_holder = lease_holder;
  inst.loaded_at_us = clock->NowUs();
  inst.known_revision = 0;
  if (!lease_holder) {
    // A short-lived instance starts from the last persisted snapshot.
    if (Result<StateBlob> blob = store->GetState(slot.id); blob.ok()) {
      inst.known_revision = blob->revision;
    }
  }
  RunRequest init;
  init.source = TriggerSource::kInit;
  init.entry = "init";
  init.flow_id = flow_id;
  init.depth = depth;
  RunResult result = Run(slot, inst, std::move(init), policy, scope);
  if (result.refused || !result.outcome.ok) {
    inst.instance.reset();
    if (failed != nullptr) *failed = std::move(result);
    return false;
  }
  return true;
}

RunResult Core::Run(ModuleSlot& slot, InstanceState& inst, RunRequest request,
                    const Policy& policy, DataScope* scope) {
  RunResult result;
  const int64_t started_ms = wall->UnixNowMs();
  bool probe = false;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    slot.circuit.SetLimits(policy.failure_threshold, policy.cooldown_ms);
    Circuit::Admit admit = slot.circuit.Before(started_ms);
    if (admit == Circuit::Admit::kRefused) {
      result.refused = true;
      return result;
    }
    probe = admit == Circuit::Admit::kProbe;
  }

  RunCalls calls(*this, slot, inst, request, policy, scope);
  const bool long_budget = request.source == TriggerSource::kInvoke ||
                           request.source == TriggerSource::kEvent;
  CallLimits limits;
  limits.fuel = long_budget ? policy.fuel_per_invoke : policy.fuel_per_tick;
  limits.max_run_ms = static_cast<uint32_t>(policy.max_run_ms);
  CallOutcome& out = result.outcome;
  if (request.source == TriggerSource::kInit) {
    Result<std::shared_ptr<const wasm::CompiledModule>> module =
        Compiled(slot, inst.version_no, policy.max_memory_mb);
    if (!module.ok()) {
      out = Failed("load: " + module.status().message(), "load");
    } else {
      InstanceOptions io;
      io.memory_mb = static_cast<uint32_t>(policy.max_memory_mb);
      io.max_run_ms = limits.max_run_ms;
      io.instantiate_fuel = policy.fuel_per_tick;
      guest::SandboxEnv env;
      env.watchdog = watchdog;
      Result<std::unique_ptr<ComputeInstance>> created =
          ComputeInstance::Create(*module, io, env);
      if (!created.ok()) {
        out = Failed("instantiate: " + created.status().message());
      } else {
        inst.instance = std::move(*created);
        inst.data = inst.instance->imports_data();
        if (&inst == &slot.loaded) slot.loaded_data.store(inst.data);
        out = inst.instance->Init(calls, limits);
      }
    }
  } else if (!inst.alive()) {
    out = Failed("the module has no live instance");
  } else if (request.source == TriggerSource::kTick) {
    out = inst.instance->Tick(request.dt_ms, calls, limits);
  } else if (request.source == TriggerSource::kInvoke) {
    out = inst.instance->Invoke(request.input, calls, limits);
  } else {
    out = inst.instance->Event(request.input, calls, limits);
  }
  if (out.instance_dead) inst.instance.reset();
  if (&inst == &slot.loaded) {
    slot.is_loaded.store(inst.alive());
    // The module's task loads a fresh instance (at once, or at its next
    // tick deadline).
    if (out.instance_dead) Poke(slot);
  }

  // The transaction: an owned one commits after a successful call (a
  // failed commit fails the run) and rolls back after a failed one; a
  // nested one is the caller's to finish.
  std::vector<data::ChangeEvent> changes;
  if (scope != nullptr && scope->owned != nullptr) {
    if (out.ok) {
      Result<std::vector<data::ChangeEvent>> committed = scope->owned->Commit();
      if (committed.ok()) {
        changes = std::move(committed).value();
      } else {
        out.ok = false;
        out.output.clear();
        out.error = "commit: " + committed.status().message();
        out.stop_kind = "commit";
      }
    }
    scope->owned.reset();  // rolls back unless committed
    scope->txn = nullptr;
  }

  // The circuit and the module's record.
  bool changed = false;
  std::string action;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    // A successful init outside a probe is not a sign of health: a module
    // whose every tick kills its instance would otherwise never trip.
    const bool counts =
        !(request.source == TriggerSource::kInit && out.ok && !probe);
    if (counts) {
      action = slot.circuit.After(out.ok, started_ms);
    }
    ModuleRecord& rec = slot.record;
    if (!out.ok) {
      rec.last_error = out.error;
      changed = true;
    }
    if (rec.circuit != slot.circuit.state() ||
        rec.consecutive_failures != slot.circuit.consecutive_failures() ||
        rec.circuit_opened_ms != slot.circuit.opened_ms()) {
      rec.circuit = slot.circuit.state();
      rec.consecutive_failures = slot.circuit.consecutive_failures();
      rec.circuit_opened_ms = slot.circuit.opened_ms();
      changed = true;
    }
  }
  if (changed) (void)Persist(slot);
  if (action == "opened" || action == "reopened") {
    c_circuit_opens.fetch_add(1, std::memory_order_relaxed);
  }

  // Records: a row for every run but healthy ticks; usage for all.
  const bool tick = request.source == TriggerSource::kTick;
  recorder.AddUsage(slot.id, started_ms, tick, out.ok, out, calls.egress_msgs(),
                    calls.egress_bytes());
  if (!tick || !out.ok || probe || !action.empty()) {
    RunRecord row;
    row.module_id = slot.id;
    row.module_name = slot.name;
    row.version_no = inst.version_no;
    row.started_ms = started_ms;
    row.source = probe ? TriggerSource::kProbe : request.source;
    row.entry = request.entry;
    row.success = out.ok;
    row.duration_us = out.duration_us;
    row.fuel_used = out.fuel_used;
    row.data_reads = calls.data_reads();
    row.data_writes = calls.data_writes();
    row.egress_msgs = calls.egress_msgs();
    row.egress_bytes = calls.egress_bytes();
    row.error_message = out.error;
    row.circuit_action = action;
    row.flow_id = calls.flow_id();
    recorder.AddRun(std::move(row));
  }
  if (!calls.logs().empty()) recorder.AddLogs(std::move(calls.logs()));
  c_runs.fetch_add(1, std::memory_order_relaxed);
  if (!out.ok) c_failures.fetch_add(1, std::memory_order_relaxed);
  if (tick) c_ticks.fetch_add(1, std::memory_order_relaxed);
  c_fuel.fetch_add(out.fuel_used, std::memory_order_relaxed);
  c_cpu_us.fetch_add(out.cpu_us, std::memory_order_relaxed);
  c_egress_msgs.fetch_add(calls.egress_msgs(), std::memory_order_relaxed);
  c_egress_bytes.fetch_add(calls.egress_bytes(), std::memory_order_relaxed);

  result.circuit_action = std::move(action);
  if (calls.has_flow_id() || request.source == TriggerSource::kInvoke) {
    result.flow_id = calls.flow_id();
  }
  // What waits for the commit: on success run now (after the commit) or
  // handed to the caller's scope; dropped on failure. Without a
  // transaction, compute events are dispatched whatever the outcome (as
  // before the app's data existed), sends only on success.
  Deferred::Effects fx = std::move(calls.effects());
  for (EmittedEvent& e : calls.events()) {
    fx.events.emplace_back(slot.name, std::move(e));
  }
  if (out.ok) {
    if (scope != nullptr) {
      Deferred::Effects all = std::move(scope->carried);
      scope->carried = Deferred::Effects();
      all.Append(std::move(fx));
      fx = std::move(all);
    }
    if (scope != nullptr && scope->out != nullptr) {
      scope->out->Append(std::move(fx));
    } else {
      RunEffects(std::move(fx));
      if (!changes.empty()) {
        DispatchChanges(changes, request.depth + 1, calls.flow_id());
      }
    }
  } else if (scope == nullptr && !fx.events.empty()) {
    std::vector<EmittedEvent> events;
    for (auto& [source, e] : fx.events) events.push_back(std::move(e));
    Dispatch(slot.name, std::move(events));
  }
  return result;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) |
                 uint8_t(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (rest == 2) v |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool IsJson(std::string_view text) {
  return !text.empty() && nlohmann::json::accept(text);
}

Status RunFailure(const std::string& module, const CallOutcome& outcome) {
  StatusCode code = StatusCode::kTrap;
  if (outcome.stop_kind == "fuel" || outcome.stop_kind == "memory") {
    code = StatusCode::kResourceExhausted;
  } else if (outcome.stop_kind == "watchdog") {
    code = StatusCode::kDeadlineExceeded;
  } else if (outcome.stop_kind == "load" || outcome.stop_kind == "commit") {
    // Not the module's fault: the code could not be loaded, or the data
    // store failed to commit. Callers may try again.
    code = StatusCode::kUnavailable;
  }
  return Status(code, "module \"" + module + "\": " + outcome.error);
}

}  // namespace tessera::compute::engine_internal
