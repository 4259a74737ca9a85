// Plain values of compute modules (docs/compute.md), shared by the store
// port, the engine and the admin API. No behaviour here.
//
// Times are unix milliseconds unless named *_us. JSON-valued fields hold
// JSON text exactly as validated where it entered.
#ifndef TESSERA_COMPUTE_COMPUTE_TYPES_H_
#define TESSERA_COMPUTE_COMPUTE_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::compute {

// Source language of a version.
enum class Language { kRust, kCpp };
const char* LanguageName(Language language);  // "rust" | "cpp"

enum class CompileStatus { kPending, kCompiling, kSucceeded, kFailed };
// "pending" | "compiling" | "succeeded" | "failed"
const char* CompileStatusName(CompileStatus status);

enum class CircuitState { kClosed, kOpen, kHalfOpen };
const char* CircuitStateName(
    CircuitState state);  // "closed" | "open" | "half_open"

enum class TriggerType { kTick, kEvent, kInvoke };
const char* TriggerTypeName(TriggerType type);  // "tick" | "event" | "invoke"

// What started a run ("triggerSource" in runs and logs).
enum class TriggerSource { kInit, kTick, kEvent, kInvoke, kProbe };
// "init" | "tick" | "event" | "invoke" | "probe"
const char* TriggerSourceName(TriggerSource source);

// A module (computeUpsertModule). Created disabled.
struct ModuleRecord {
  int64_t id = 0;    // assigned by the store
  std::string name;  // crate-shaped: [a-z][a-z0-9_-]{0,127}
  std::string description;
  bool enabled = false;
  bool always_on = false;
  // The version that runs: the newest succeeded version at enable time, or
  // 0 when none.
  int64_t active_version = 0;
  CircuitState circuit = CircuitState::kClosed;
  int consecutive_failures = 0;
  int64_t circuit_opened_ms = 0;  // when it last opened (0: never)
  std::string last_error;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// One immutable deploy of a module (computeDeployVersion).
struct VersionRecord {
  int64_t module_id = 0;
  int64_t version_no = 0;  // 1, 2, ... per module, assigned by the store
  Language language = Language::kRust;
  std::string sdk_version;  // "0.1.0"
  int abi_version = 1;
  // The uploaded files, relative path -> contents (validated by
  // source_rules before the record exists).
  std::map<std::string, std::string> files;
  std::string source_hash;    // hex SHA-256 of the canonical file map
  std::string template_name;  // set when deployed from a template
  CompileStatus status = CompileStatus::kPending;
  std::string compile_log;  // the compiler's output, verbatim
  int64_t compiled_size_bytes = 0;
  std::string artifact_path;  // the compiled .wasm, once succeeded
  bool cache_hit = false;     // compiled from the artifact cache
  int64_t created_ms = 0;
  int64_t compiled_ms = 0;
};

// A trigger (computeUpsertTrigger). A module has any mix; an invoke
// trigger's export_name is unique per module, there is at most one tick
// trigger per module, and event triggers are keyed by (event, filter).
struct TriggerRecord {
  int64_t id = 0;  // assigned by the store
  int64_t module_id = 0;
  TriggerType type = TriggerType::kTick;
  // tick
  double tick_hz = 0;
  // event: on_event is one of kEventSources (below). Filters, "" = any:
  // event_name (compute_event's name), entity_type (row_created,
  // field_changed, row_deleted), field_name (field_changed), function_name
  // (function_invoked: "module.export" or an export name). A filter that
  // does not apply to on_event is refused on upsert.
  std::string on_event = "compute_event";
  std::string event_name;
  std::string entity_type;
  std::string field_name;
  std::string function_name;
  int64_t debounce_ms = 0;
  // invoke
  std::string export_name;
  // The invoke policy JSON ("" = management tokens only) and the typed
  // contract JSON ("" = none), both validated on upsert.
  std::string invoke_policy_json;
  std::string contract_json;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// The events an event trigger can listen to ("onEvent"). Data events are
// raised after their transaction commits, one per row change (field_changed:
// one per changed field), with the payloads of docs/compute-abi.md
// "Events".
inline constexpr const char* kEventSources[] = {
    "compute_event", "row_created", "field_changed", "row_deleted",
    "function_invoked"};

// The per-app policy (computeModulePolicy); defaults are the seed's.
struct Policy {
  bool enabled = true;  // app-wide kill switch
  int64_t max_modules = 10;
  double max_tick_hz = 10;
  int64_t fuel_per_tick = 200'000'000;
  int64_t fuel_per_invoke = 1'000'000'000;
  int64_t max_memory_mb = 64;
  int64_t max_run_ms = 200;
  int64_t max_db_ops_per_tick = 50;
  int64_t max_egress_msgs_per_min = 600;
  int64_t max_egress_bytes_per_min = 1'000'000;
  int64_t failure_threshold = 5;
  int64_t cooldown_ms = 60'000;
  // Not in the seed's table: how long a module without alwaysOn stays
  // loaded after the app's last realtime session ends.
  int64_t idle_unload_ms = 5 * 60'000;
};

// One run row: every init / invoke / event run, every failed run and every
// circuit probe. Healthy ticks are aggregated into UsageRow instead.
struct RunRecord {
  int64_t id = 0;  // assigned by the store
  int64_t module_id = 0;
  std::string module_name;
  int64_t version_no = 0;
  int64_t started_ms = 0;
  TriggerSource source = TriggerSource::kInit;
  std::string entry;  // "init", "tick", "event:<name>", the export name
  bool success = true;
  int64_t duration_us = 0;
  int64_t fuel_used = 0;
  int64_t data_reads = 0;
  int64_t data_writes = 0;
  int64_t egress_msgs = 0;
  int64_t egress_bytes = 0;
  std::string error_message;
  // "" | "opened" | "probe" | "closed" (what this run did to the circuit)
  std::string circuit_action;
  std::string flow_id;
};

// Per-minute usage of one module (the billing metrics).
struct UsageRow {
  int64_t module_id = 0;
  int64_t minute_ms = 0;  // start of the minute (unix ms, multiple of 60000)
  int64_t ticks = 0;
  int64_t runs = 0;  // every run, ticks included
  int64_t failures = 0;
  int64_t fuel_used = 0;
  int64_t duration_us = 0;   // wall time of the runs, summed
  int64_t cpu_us = 0;        // thread CPU time of the runs, summed
  double compute_units = 0;  // see docs/compute.md "Metering"
  int64_t egress_msgs = 0;
  int64_t egress_bytes = 0;
};

// A module log line (the guest's log() calls, and host warnings such as a
// refused state_set).
struct LogRecord {
  int64_t id = 0;
  int64_t module_id = 0;
  int64_t ts_ms = 0;
  int level = 1;
  std::string message;
  TriggerSource source = TriggerSource::kInit;
  std::string flow_id;
};

// The module's durable state blob and its revision (0: never set).
struct StateBlob {
  std::string bytes;
  int64_t revision = 0;
};

// Filters of the monitoring lists. Newest first; limit <= 1000.
struct RunFilter {
  std::optional<int64_t> module_id;
  std::optional<bool> success;
  std::optional<std::string> flow_id;
  int64_t since_ms = 0;
  int64_t limit = 100;
};
struct LogFilter {
  std::optional<int64_t> module_id;
  int64_t since_ms = 0;
  int64_t limit = 100;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_COMPUTE_TYPES_H_
