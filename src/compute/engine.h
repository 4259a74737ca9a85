// ComputeEngine: compute modules of one app, end to end (docs/compute.md):
// the management operations (modules, versions, triggers, policy), the
// compile queue, activation (load while the app has realtime sessions,
// unload after the idle window, alwaysOn), the triggers (ticks on the
// worker pool without overlap, compute events with debounce and a depth
// limit, invokes), the limits and breakers (fuel, watchdog, memory, egress
// budgets, the failure circuit, the kill switch), and monitoring (run rows,
// per-minute usage, logs, stats, diagnostics). Every operation of the
// seed's API is one method here; server/compute_routes maps each to HTTP.
//
// Time: `wall_clock` (unix ms, for records and budgets) and `clock`
// (monotonic, for tick deadlines) are injected; tests pass fakes and drive
// ticks with a manual worker pool.
//
// Threading: every public method may be called from any thread. A module's
// entry calls never overlap (one instance, one call at a time); runs happen
// on the worker pool's threads, except Invoke, which runs on the caller's
// thread (under the module's run lock: no thread hop).
#ifndef TESSERA_COMPUTE_ENGINE_H_
#define TESSERA_COMPUTE_ENGINE_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "compute/compute_store.h"
#include "compute/compute_types.h"
#include "compute/notify_sink.h"
#include "compute/shards_port.h"
#include "compute/source_compiler.h"
#include "data/data_store.h"

namespace tessera::guest {
class WorkerPool;
class Watchdog;
}  // namespace tessera::guest

namespace tessera::compute {

struct EngineOptions {
  // Not owned; must outlive the engine. `notify` may be null (emits reach
  // nobody: count 0; no sessions: only alwaysOn modules load).
  ComputeStore* store = nullptr;
  SourceCompiler* compiler = nullptr;
  NotifySink* notify = nullptr;
  // The app's data and shards (the `data` / `shards` host calls); null:
  // those calls fail with kErrUnavailable. Not owned.
  data::DataStore* data = nullptr;
  ShardsPort* shards = nullptr;
  guest::WorkerPool* workers = nullptr;  // null: the engine makes its own
  guest::Watchdog* watchdog = nullptr;   // null: the engine makes its own
  // The monotonic clock of tick deadlines: the pool's. Null: workers'
  // clock(), or the real one.
  const Clock* clock = nullptr;
  const WallClock* wall_clock = nullptr;  // null: the real wall clock
  // Where compiled artifacts are loaded from and the wasm loader's cache.
  std::filesystem::path cache_dir;
  // The loader's C compiler for the AOT step.
  std::string c_compiler = "cc";
  // Server-wide maxima (policy.h).
  Policy ceilings;
  // Bundled templates (templates.h); empty: FindTemplatesDir().
  std::filesystem::path templates_dir;
  // Every module log line also goes here (the server log); may be empty.
  std::function<void(std::string_view module, int level, std::string_view text)>
      forward_log;
  // Called (on the compile queue's thread) after each finished version has
  // been applied (made active when it should); may be empty.
  std::function<void(const VersionRecord& version)> on_compiled;
  // How often buffered runs, usage and logs are written to the store.
  int64_t flush_ms = 1000;
  // Retention of run rows and logs (usage: 30 days).
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;
};

// A module as the API shows it.
struct ModuleView {
  ModuleRecord record;
  bool loaded = false;                          // an instance is running now
  std::optional<VersionRecord> latest_version;  // without files
  size_t trigger_count = 0;
};

struct DeployRequest {
  std::string module;
  SourceFiles files;
  std::optional<Language> language;  // null: DetectLanguage
  std::string sdk_version = "0.1.0";
  int abi_version = 1;
  // Enable the module once this version compiles (the manifest's modules
  // at boot). A version that succeeds while its module is enabled becomes
  // the active one either way (a fresh instance runs init).
  bool enable_on_success = false;
  std::string template_name;  // set by DeployTemplate
};

struct TriggerSpec {
  std::string module;
  TriggerRecord trigger;  // id/module_id/timestamps ignored
};

struct InvokeRequest {
  std::string module;
  std::string export_name;
  std::string params_json = "{}";
  // The caller: a management token (bypasses invoke policies) or a player
  // identified by a verified ticket (caller_user_id = its subscriber id).
  bool management = false;
  std::string caller_user_id;
  // Set for a shard's keyed call or onStop (management is true then too):
  // the invoke input carries it as "callerShardId".
  std::string caller_shard_id;
  std::string flow_id;  // empty: a new one
};

struct InvokeResult {
  std::string result;  // the module's bytes
  bool result_is_json = false;
  int64_t fuel_used = 0;
  int64_t duration_us = 0;
  std::string flow_id;
};

// A function of the app: an invoke trigger's export of one module.
struct FunctionRef {
  std::string module;
  std::string export_name;
};

// What runs did that takes effect only once their transaction commits
// (shards.send, shards.publish, the compute events they emitted and the
// function_invoked events of the invokes). Filled by InvokeInTxn, run by
// AfterCommit; dropped when the transaction rolls back. Opaque outside the
// engine: move it around, never look inside.
class Deferred {
 public:
  Deferred();
  ~Deferred();
  Deferred(Deferred&&) noexcept;
  Deferred& operator=(Deferred&&) noexcept;
  bool empty() const;
  // Appends `other`'s effects after this one's.
  void Append(Deferred&& other);
  struct Effects;

 private:
  friend class ComputeEngine;
  std::unique_ptr<Effects> effects_;
};

// Stats over a window (computeModuleStats).
struct ModuleStats {
  std::string module;
  int64_t runs = 0, failures = 0, fuel_used = 0, egress_msgs = 0;
  int64_t egress_bytes = 0, duration_us = 0;
  double compute_units = 0;
  CircuitState circuit = CircuitState::kClosed;
};
struct StatsView {
  int64_t window_minutes = 60;
  int64_t total_runs = 0, failed_runs = 0, total_fuel_used = 0;
  int64_t total_egress_msgs = 0, total_egress_bytes = 0;
  double failure_rate_pct = 0, avg_duration_us = 0, compute_units = 0;
  std::vector<ModuleStats> by_module;
};
struct DiagnosticsView {
  int64_t module_count = 0, enabled_module_count = 0, loaded_module_count = 0;
  int64_t version_count = 0, trigger_count = 0;
  int64_t runs_24h = 0, failed_runs_24h = 0, fuel_used_24h = 0;
  bool policy_enabled = true;
  std::vector<ModuleStats> top_modules;  // by runs, at most 5
};

struct TemplateInfo {
  std::string name;
  std::string description;
  Language language = Language::kRust;
};

class ComputeEngine {
 public:
  explicit ComputeEngine(EngineOptions options);
  ~ComputeEngine();  // Shutdown()
  ComputeEngine(const ComputeEngine&) = delete;
  ComputeEngine& operator=(const ComputeEngine&) = delete;

  // Reads the store, resumes unfinished compiles and activates what should
  // run. Errors: the store's.
  Status Start();
  // Stops ticks, flushes runs/usage/logs, stops the compile queue.
  void Shutdown();

  // --- management (manage_compute). Errors: kInvalidArgument (bad input,
  // naming it), kNotFound, kFailedPrecondition (e.g. enabling without a
  // succeeded version), kResourceExhausted (maxModules), the store's.
  Result<ModuleRecord> UpsertModule(std::string_view name,
                                    std::string_view description,
                                    bool always_on);
  Status DeleteModule(std::string_view name);
  Result<VersionRecord> DeployVersion(DeployRequest request);
  Result<VersionRecord> DeployTemplate(std::string_view template_name,
                                       std::string_view module);
  Result<TriggerRecord> UpsertTrigger(const TriggerSpec& spec);
  Status DeleteTrigger(std::string_view module, int64_t trigger_id);
  Result<ModuleRecord> SetEnabled(std::string_view module, bool enabled);
  // Enables `module` once its version `version_no` compiles, or now when it
  // already has (a manifest module whose first compile a restart
  // interrupted: the queue resumes it at Start, and the boot sync asks for
  // the enable again, since enable_on_success is not stored). A version
  // that failed leaves the module as it is. Errors: kNotFound, the store's.
  Status EnableWhenCompiled(std::string_view module, int64_t version_no);
  Result<Policy> SetPolicy(std::string_view patch_json);

  // --- invoke (by its trigger's policy). Errors: kNotFound (no module or
  // no invoke trigger for the export), kPermissionDenied (policy),
  // kInvalidArgument ("BAD_REQUEST: ..." contract violations),
  // kUnavailable (disabled, circuit open, kill switch, shut down), kTrap /
  // kResourceExhausted / kDeadlineExceeded (the run failed: the message is
  // the run's error).
  Result<InvokeResult> Invoke(const InvokeRequest& request);

  // --- functions and transactions (the app's data).
  // "module.export", or a bare export name that exactly one module has an
  // invoke trigger for. Errors: kNotFound ("FUNCTION_NOT_FOUND: ..."),
  // kInvalidArgument ("BAD_REQUEST: ..." ambiguous or malformed).
  Result<FunctionRef> ResolveFunction(std::string_view function) const;
  // Invoke inside the caller's write transaction `txn` (the keyed-call
  // runner's scope): the module's data ops use `txn`, and what must wait
  // for the commit goes to `*deferred`. The caller commits (or rolls back)
  // and then calls AfterCommit. A failed run leaves `txn`'s scope for the
  // caller to roll back (its data ops may have written). Errors as Invoke.
  // (Invoke itself opens, commits and follows up its own transaction when
  // the module imports `data`.)
  Result<InvokeResult> InvokeInTxn(data::DataTxn& txn,
                                   const InvokeRequest& request,
                                   Deferred* deferred);
  // After the commit: runs `deferred` and raises the data events of
  // `changes` (ChangeEvents from DataTxn::Commit).
  void AfterCommit(Deferred deferred,
                   const std::vector<data::ChangeEvent>& changes,
                   std::string_view flow_id);
  // Data events of changes committed outside the engine (the admin API,
  // the shards' entity writes).
  void OnDataChanges(const std::vector<data::ChangeEvent>& changes,
                     std::string_view flow_id);

  // --- events from outside the modules (tests).
  void RaiseEvent(std::string_view on_event, std::string_view name,
                  std::string_view payload_json, std::string_view flow_id);

  // --- monitoring (view_compute_diagnostics)
  Result<std::vector<ModuleView>> Modules();
  Result<std::vector<VersionRecord>> Versions(std::string_view module,
                                              int64_t limit);
  Result<std::vector<TriggerRecord>> Triggers(std::string_view module);
  Policy policy() const;
  Result<std::vector<RunRecord>> Runs(std::optional<std::string> module,
                                      RunFilter filter);
  Result<std::vector<LogRecord>> Logs(std::optional<std::string> module,
                                      LogFilter filter);
  Result<StatsView> Stats(int64_t window_minutes);
  Result<DiagnosticsView> Diagnostics();
  Result<std::vector<UsageRow>> Usage(std::optional<std::string> module,
                                      int64_t since_ms);
  std::vector<TemplateInfo> Templates() const;
  // Writes buffered runs, usage and logs now (tests; the API before reads).
  Status Flush();

  // --- activation input: the app's realtime session count may have
  // changed (the engine also polls NotifySink::SessionCount every second).
  void OnSessionsChanged();

  // Counters for /metrics: totals since start.
  struct Counters {
    int64_t runs = 0, failures = 0, ticks = 0, fuel_used = 0, cpu_us = 0;
    int64_t egress_msgs = 0, egress_bytes = 0, egress_refused = 0;
    int64_t loaded_modules = 0, circuit_opens = 0;
  };
  Counters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_ENGINE_H_
