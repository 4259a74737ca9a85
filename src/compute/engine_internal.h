// Private to the engine (engine*.cc): ComputeEngine::Impl and what its
// parts share. One module is a ModuleSlot; each slot has one WorkerPool task
// (ModuleTask) that loads and unloads its instance, delivers its events and
// takes its ticks; Invoke runs on the caller's thread under the same
// per-module run lock, so a module's entry calls never overlap.
//
// Files: engine.cc (construction, Start/Shutdown, management), engine_run.cc
// (one run: circuit, limits, host calls, recording), engine_invoke.cc,
// engine_ticks.cc (the module task), engine_events.cc, engine_activation.cc
// (sessions, the housekeeping task), engine_monitor.cc (buffered records and
// the monitoring reads), engine_data.cc (the data and shards host calls),
// engine_txn.cc (Deferred, functions, InvokeInTxn, AfterCommit, data
// events).
//
// Lock order: the data store's writer (a kWrite DataTxn), then
// ModuleSlot::run_mu, then ModuleSlot::persist_mu, then ModuleSlot::mu,
// then Recorder::mu. The writer is taken BEFORE run_mu (never while holding
// it): the keyed-call runner holds the writer when it calls InvokeInTxn.
// Core::mu is a leaf: never held while taking another lock, across a run or
// a store call. A run (holding its module's run_mu) may take another
// module's mu (events), never its run_mu.
#ifndef TESSERA_COMPUTE_ENGINE_INTERNAL_H_
#define TESSERA_COMPUTE_ENGINE_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compute/circuit.h"
#include "compute/compute_types.h"
#include "compute/contract.h"
#include "compute/egress_budget.h"
#include "compute/engine.h"
#include "compute/module_instance.h"
#include "data/data_store.h"
#include "guest/watchdog.h"
#include "guest/worker_pool.h"

namespace tessera::compute {
namespace engine_internal {

// How long the module task waits for the data store's writer before an
// entry call of a module importing data (then the call is skipped, with a
// warning: a tick at its next deadline, an event dropped, a load retried).
inline constexpr int64_t kTaskTxnWaitMs = 1000;

// Tick deadlines at a rate in Hz that may be fractional (0.5 Hz):
// D(n) = start + n * 1e6 / hz, computed from n each time so rounding never
// accumulates. A tick taken a whole period or more late skips to the latest
// deadline not after now instead of bursting (shard::TickSchedule does the
// same for integer rates).
class TickDeadlines {
 public:
  void Reset(int64_t start_us, double hz);
  bool active() const { return hz_ > 0; }
  double hz() const { return hz_; }
  int64_t next_deadline_us() const { return DeadlineOf(next_); }
  bool Due(int64_t now_us) const {
    return active() && now_us >= next_deadline_us();
  }
  // Consumes the due deadline; returns how many were skipped.
  uint64_t Take(int64_t now_us);

 private:
  int64_t DeadlineOf(uint64_t n) const;
  int64_t start_us_ = 0;
  double hz_ = 0;
  uint64_t next_ = 1;
};

// An event waiting for its module (debounce) or its module's next pass.
struct PendingEvent {
  int64_t trigger_id = 0;
  std::string on_event = "compute_event";
  std::string name;
  std::string payload;
  std::string source_module;
  std::string flow_id;
  int depth = 1;
  int64_t coalesced = 1;  // events this delivery stands for
  int64_t due_us = 0;     // on the engine's monotonic clock
  bool debounced = false;
};

// An event to dispatch: a compute event a run emitted (dispatched once the
// run is over; for a run in a data transaction once it committed), or a
// data event (on_event one of kEventSources; name = on_event) with the keys
// its triggers' filters match.
struct EmittedEvent {
  std::string name;
  std::string payload;
  std::string flow_id;
  int depth = 1;
  std::string on_event = "compute_event";
  std::string entity_type;  // row_created, field_changed, row_deleted
  std::string field_name;   // field_changed
  std::string function;     // function_invoked: "module.export"
  std::string export_name;  // function_invoked
};

// One instance of a module and what the state revision guard knows of it.
struct InstanceState {
  std::unique_ptr<ComputeInstance> instance;
  int64_t version_no = 0;
  int64_t memory_mb = 0;  // the memory cap it was loaded with
  // The tick-lease holder (the module's loaded instance) always wins
  // state writes; a short-lived instance writes only over the revision it
  // last read or wrote.
  bool lease_holder = false;
  int64_t known_revision = 0;
  int64_t loaded_at_us = 0;
  bool data = false;  // the instance imports tessera_compute_v1.data
  bool alive() const { return instance != nullptr && !instance->dead(); }
};

}  // namespace engine_internal

// What waits for a transaction's commit (engine.h Deferred): shards.send
// and shards.publish of the runs, and the events they raise (compute events,
// function_invoked), each with the module that made it.
struct Deferred::Effects {
  struct Send {
    int64_t module_id = 0;
    std::string module, shard, input, flow_id;
  };
  struct Publish {
    int64_t module_id = 0;
    std::string module, target, topic, data, flow_id;
  };
  std::vector<Send> sends;
  std::vector<Publish> publishes;
  // (source module, event)
  std::vector<std::pair<std::string, engine_internal::EmittedEvent>> events;
  bool empty() const {
    return sends.empty() && publishes.empty() && events.empty();
  }
  void Append(Effects&& other);
};

namespace engine_internal {

// The data transaction of one entry call (or of the caller's scope, for
// InvokeInTxn). Taken before the module's run lock.
struct DataScope {
  data::DataTxn* txn = nullptr;  // null: none (the module has no data)
  // The engine's own transaction: Run commits it after a successful call
  // (a failed commit fails the run) and rolls it back after a failed one.
  std::unique_ptr<data::DataTxn> owned;
  // Not owned (nested: InvokeInTxn, or an init sharing its call's
  // transaction): a successful run's effects go here instead of running.
  Deferred::Effects* out = nullptr;
  // Effects of an earlier run of this scope (the init before a call), run
  // or passed on with the call's.
  Deferred::Effects carried;
};

class ModuleTask;
struct Core;

struct ModuleSlot {
  ModuleSlot(ModuleRecord record, const Policy& policy);

  const int64_t id;
  const std::string name;

  // --- under mu
  mutable std::mutex mu;
  ModuleRecord record;
  std::vector<TriggerRecord> triggers;
  // Parsed contracts of invoke triggers by trigger id (null: none).
  std::map<int64_t, std::shared_ptr<const Contract>> contracts;
  Circuit circuit;
  std::deque<PendingEvent> events;
  bool deleted = false;  // DeleteModule: the task ends
  // Versions deployed with enable_on_success, still compiling.
  std::set<int64_t> enable_on_success;
  // The loaded code of one version at one memory cap.
  std::shared_ptr<const wasm::CompiledModule> compiled;
  int64_t compiled_version = 0;
  int64_t compiled_memory_mb = 0;

  // --- under run_mu (one entry call at a time)
  std::mutex run_mu;
  InstanceState loaded;  // the lease holder, when the module is active
  EgressBudget egress;
  TickDeadlines ticks;
  int64_t last_tick_us = 0;
  int64_t retry_load_us = 0;  // no load attempt before (monotonic)

  // Serialises writes of the record's state to the store, so the last one
  // written is the newest.
  std::mutex persist_mu;

  // --- any thread
  std::atomic<bool> is_loaded{false};
  // The loaded instance imports data (set when it is created; may stay
  // true after it went: then a call takes a transaction it does not use).
  std::atomic<bool> loaded_data{false};
  std::shared_ptr<ModuleTask> task;  // set before the slot is shared
};

// The slot's WorkerPool task (engine_ticks.cc).
class ModuleTask final : public guest::WorkerPool::Task {
 public:
  ModuleTask(Core* impl, std::weak_ptr<ModuleSlot> slot)
      : impl_(impl), slot_(std::move(slot)) {}
  std::optional<int64_t> Run(int64_t now_us) override;

 private:
  Core* const impl_;
  const std::weak_ptr<ModuleSlot> slot_;
};

// The engine-wide housekeeping task: session polling, flushes, retention
// (engine_activation.cc).
class HouseTask final : public guest::WorkerPool::Task {
 public:
  explicit HouseTask(Core* impl) : impl_(impl) {}
  std::optional<int64_t> Run(int64_t now_us) override;

 private:
  Core* const impl_;
};

// Buffered run rows, usage and logs (engine_monitor.cc).
class Recorder {
 public:
  void AddRun(RunRecord run);
  void AddLogs(std::vector<LogRecord> logs);
  // Adds one run to its module's row of the minute of `started_ms`.
  void AddUsage(int64_t module_id, int64_t started_ms, bool tick, bool ok,
                const CallOutcome& outcome, int64_t egress_msgs,
                int64_t egress_bytes);
  // Drops what is buffered for a deleted module.
  void Forget(int64_t module_id);
  Status Flush(ComputeStore& store);

 private:
  mutable std::mutex mu;
  std::vector<RunRecord> runs_;
  std::vector<LogRecord> logs_;
  std::map<std::pair<int64_t, int64_t>, UsageRow> usage_;
};

// What one run is (engine_run.cc).
struct RunRequest {
  TriggerSource source = TriggerSource::kInit;  // init, tick, event, invoke
  std::string entry;
  std::string flow_id;  // empty: made when first needed
  int depth = 0;        // the event depth of the run (0: not an event)
  uint32_t dt_ms = 0;
  std::string input;  // invoke / event input
};

struct RunResult {
  bool refused = false;  // the circuit refused it: not a run
  CallOutcome outcome;
  std::string flow_id;
  std::string circuit_action;
};

// What a pass needs of a module's record and triggers (a copy taken under
// its mu).
struct Snapshot {
  bool enabled = false;
  int64_t active_version = 0;
  bool compiling = false;  // a version waits to be enabled once it compiles
  bool always_on = false;
  double tick_hz = 0;
};

// The engine itself (ComputeEngine::Impl is this).
struct Core {
  explicit Core(EngineOptions options);

  EngineOptions options;
  ComputeStore* store;
  const Clock* clock;
  const WallClock* wall;
  std::unique_ptr<guest::WorkerPool> own_pool;
  guest::WorkerPool* pool;
  std::unique_ptr<guest::Watchdog> own_watchdog;
  guest::Watchdog* watchdog;
  std::unique_ptr<CompileQueue> queue;

  mutable std::mutex mu;
  Policy policy_value;
  std::map<std::string, std::shared_ptr<ModuleSlot>, std::less<>> modules;
  bool started = false;
  bool shut_down = false;

  Recorder recorder;
  std::mutex flush_mu;  // one flush at a time: records reach the store in order
  std::shared_ptr<HouseTask> house;

  // Activation (engine_activation.cc): the app has realtime sessions, or
  // had them less than idle_unload_ms ago. Written by the housekeeping task.
  std::atomic<bool> app_active{false};
  std::atomic<int64_t> sessions_ended_us{-1};  // -1: never had sessions
  std::atomic<size_t> last_sessions{0};
  int64_t next_poll_us = 0, next_flush_us = 0, next_prune_us = 0;  // house

  // Event triggers of any module whose onEvent is a data event (so that
  // an engine without them skips building data events).
  std::atomic<int64_t> data_triggers{0};

  // Counters (ComputeEngine::Counters).
  std::atomic<int64_t> c_runs{0}, c_failures{0}, c_ticks{0}, c_fuel{0},
      c_cpu_us{0}, c_egress_msgs{0}, c_egress_bytes{0}, c_egress_refused{0},
      c_circuit_opens{0};

  // --- engine.cc
  Policy CurrentPolicy() const;
  std::shared_ptr<ModuleSlot> Find(std::string_view name) const;
  // Find, or kNotFound 'no compute module "<name>"'.
  Result<std::shared_ptr<ModuleSlot>> Require(std::string_view name) const;
  std::vector<std::shared_ptr<ModuleSlot>> AllSlots() const;
  Status AddSlot(const ModuleRecord& record,
                 std::vector<TriggerRecord> triggers);
  Status RefreshTriggers(ModuleSlot& slot);
  // Recounts data_triggers.
  void CountDataTriggers();
  // Writes the slot's record state (enabled, active version, circuit...).
  Status Persist(ModuleSlot& slot);
  void OnCompiled(const VersionRecord& version);
  void Apply(const VersionRecord& version);
  void PokeAll();
  void Poke(ModuleSlot& slot);

  // --- engine_run.cc
  // Runs one entry call on `inst` (which must be alive unless source is
  // init: then it is created first). Caller holds slot.run_mu.
  // `scope`: the call's data transaction (null: none; see DataScope).
  RunResult Run(ModuleSlot& slot, InstanceState& inst, RunRequest request,
                const Policy& policy, DataScope* scope);
  // Creates the instance of the active version and runs init (a run).
  // Caller holds run_mu. False: refused or failed (recorded).
  bool Load(ModuleSlot& slot, InstanceState& inst, bool lease_holder,
            const std::string& flow_id, int depth, const Policy& policy,
            RunResult* failed, DataScope* scope);
  void Unload(ModuleSlot& slot);
  Result<std::shared_ptr<const wasm::CompiledModule>> Compiled(
      ModuleSlot& slot, int64_t version_no, int64_t memory_mb);

  // --- engine_invoke.cc
  // Runs an invoke or event call on the loaded instance, loading it first
  // when the module should be loaded, else on a short-lived instance (init,
  // the call, dropped). Caller holds slot.run_mu.
  // With an owned `scope`, an init run first shares the call's
  // transaction (in a savepoint; its effects wait for the call's commit).
  RunResult CallLocked(ModuleSlot& slot, RunRequest request,
                       const Policy& policy, DataScope* scope);
  // Invoke and InvokeInTxn (txn null: Invoke, which opens its own
  // transaction when the module imports data).
  Result<InvokeResult> DoInvoke(const InvokeRequest& request,
                                data::DataTxn* txn,
                                Deferred::Effects* deferred);

  // --- engine_ticks.cc
  std::optional<int64_t> RunModuleTask(ModuleSlot& slot, int64_t now_us);

  // --- engine_events.cc
  void Dispatch(std::string_view source_module,
                std::vector<EmittedEvent> events);
  // Runs the slot's due events, each taking the run lock (and, with
  // `data`, a transaction first); caller holds no lock. Returns the
  // earliest remaining due time.
  std::optional<int64_t> DeliverEvents(ModuleSlot& slot, int64_t now_us,
                                       const Policy& policy, bool data);

  // --- engine_txn.cc
  // Whether a call of the module needs a data transaction: the app has
  // data and the loaded instance or the active version imports it.
  bool NeedsTxn(ModuleSlot& slot, const Policy& policy);
  // Opens `scope`'s own write transaction (waiting at most wait_ms).
  // Errors: the store's (kUnavailable when busy, kIo).
  Status BeginScope(DataScope* scope, int64_t wait_ms);
  // After a commit: shards sends and publishes, then the events.
  void RunEffects(Deferred::Effects fx);
  // The data events of committed `changes` at `depth` (a cascade past
  // kMaxEventDepth stops there, with a warning to `source`'s logs).
  void DispatchChanges(const std::vector<data::ChangeEvent>& changes, int depth,
                       std::string_view flow_id);
  // A warning line in a module's logs (and the server log).
  void WarnModule(int64_t module_id, std::string_view module,
                  std::string_view text, TriggerSource source,
                  std::string_view flow_id);

  // --- engine_activation.cc
  // Whether the module should be loaded now.
  bool WantsLoaded(const Snapshot& snap, const Policy& policy) const;
  std::optional<int64_t> RunHouse(int64_t now_us);
  void PollSessions(int64_t now_us);

  // --- engine_monitor.cc
  Status Flush();
  void Prune();
};

// Small helpers shared by the engine's files.
Snapshot TakeSnapshot(const ModuleSlot& slot);  // under mu
std::string Base64Encode(std::string_view bytes);
bool IsJson(std::string_view text);
// The status of a failed run's outcome (for Invoke).
Status RunFailure(const std::string& module, const CallOutcome& outcome);

// --- engine_data.cc: one data / shards operation (compute_abi.h ops) on
// `txn` / `port`, the request JSON parsed and checked here. `kind` says
// what the op was: 0 not an op (refused before the store), 1 a read, 2 a
// write. Data errors are kErrData with code_name the message's code
// ("ROW_NOT_FOUND"; "BAD_REQUEST" for a malformed request).
HostCallResult DataOp(data::DataTxn& txn, const data::DataSchema& schema,
                      std::string_view op, std::string_view request,
                      const std::string& origin, std::string* reply, int* kind);
// send and publish are not made here but appended to `deferred` (checked
// first, so a malformed one fails now). Errors: kErrShards with the
// port's code.
HostCallResult ShardsOp(ShardsPort& port, std::string_view op,
                        std::string_view request, std::string* reply,
                        Deferred::Effects* deferred, int64_t module_id,
                        const std::string& module, const std::string& flow_id);
}  // namespace engine_internal

struct ComputeEngine::Impl : engine_internal::Core {
  using Core::Core;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_ENGINE_INTERNAL_H_
