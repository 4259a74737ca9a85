#include "store/postgres/pg_compute_rows.h"

#include <string>
#include <utility>

namespace tessera::store::pg {

using compute::CircuitState;
using compute::CompileStatus;
using compute::Language;
using compute::TriggerSource;
using compute::TriggerType;

const char kModuleColumns[] =
    "id, name, description, enabled, always_on, active_version, circuit, "
    "consecutive_failures, circuit_opened_ms, last_error, created_ms, "
    "updated_ms";
const char kVersionColumns[] =
    "module_id, version_no, language, sdk_version, abi_version, "
    "source_hash, template_name, status, compile_log, compiled_size_bytes, "
    "artifact_path, cache_hit, created_ms, compiled_ms";
const char kTriggerColumns[] =
    "id, module_id, type, tick_hz, on_event, event_name, debounce_ms, "
    "export_name, invoke_policy, contract, created_ms, updated_ms, "
    "entity_type, field_name, function_name";
const char kPolicyColumns[] =
    "enabled, max_modules, max_tick_hz, fuel_per_tick, fuel_per_invoke, "
    "max_memory_mb, max_run_ms, max_db_ops_per_tick, "
    "max_egress_msgs_per_min, max_egress_bytes_per_min, failure_threshold, "
    "cooldown_ms, idle_unload_ms";
const char kRunColumns[] =
    "id, module_id, module_name, version_no, started_ms, source, entry, "
    "success, duration_us, fuel_used, data_reads, data_writes, egress_msgs, "
    "egress_bytes, error_message, circuit_action, flow_id";
const char kUsageColumns[] =
    "module_id, minute_ms, ticks, runs, failures, fuel_used, duration_us, "
    "cpu_us, compute_units, egress_msgs, egress_bytes";
const char kLogColumns[] =
    "id, module_id, ts_ms, level, message, source, flow_id";

namespace {

constexpr Language kLanguages[] = {Language::kRust, Language::kCpp};
constexpr CompileStatus kStatuses[] = {
    CompileStatus::kPending, CompileStatus::kCompiling,
    CompileStatus::kSucceeded, CompileStatus::kFailed};
constexpr CircuitState kCircuits[] = {
    CircuitState::kClosed, CircuitState::kOpen, CircuitState::kHalfOpen};
constexpr TriggerType kTriggerTypes[] = {
    TriggerType::kTick, TriggerType::kEvent, TriggerType::kInvoke};
constexpr TriggerSource kSources[] = {
    TriggerSource::kInit, TriggerSource::kTick, TriggerSource::kEvent,
    TriggerSource::kInvoke, TriggerSource::kProbe};

// Reads the columns of one row in order, keeping the first error (later
// reads then return zero values).
class Cols {
 public:
  Cols(const PgResult& result, int row) : result_(result), row_(row) {}

  int64_t Int() {
    const int col = next_++;
    if (!status_.ok()) return 0;
    Result<int64_t> v = result_.Int64(row_, col);
    if (!v.ok()) status_ = v.status();
    return v.ok() ? *v : 0;
  }
  bool Flag() { return Int() != 0; }
  double Real() {
    const int col = next_++;
    if (!status_.ok()) return 0;
    Result<double> v = result_.Double(row_, col);
    if (!v.ok()) status_ = v.status();
    return v.ok() ? *v : 0;
  }
  std::string Bytes() {
    const int col = next_++;
    if (!status_.ok()) return "";
    Result<std::string> v = result_.Bytes(row_, col);
    if (!v.ok()) status_ = v.status();
    return v.ok() ? std::move(v).value() : "";
  }
  // The enum value whose Name() is the column's bytes.
  template <typename E, size_t N>
  E Enum(const E (&values)[N], const char* (*name)(E), const char* what) {
    const std::string text = Bytes();
    if (!status_.ok()) return values[0];
    for (E value : values) {
      if (text == name(value)) return value;
    }
    status_ = IoError(std::string("postgres compute store: unknown ") + what +
                      " \"" + text + "\" in the compute tables");
    return values[0];
  }

  const Status& status() const { return status_; }

 private:
  const PgResult& result_;
  const int row_;
  int next_ = 0;
  Status status_;
};

template <typename T>
Result<T> Done(const Cols& c, T value) {
  if (!c.status().ok()) return c.status();
  return value;
}

}  // namespace

Result<compute::ModuleRecord> ReadModuleRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::ModuleRecord m;
  m.id = c.Int();
  m.name = c.Bytes();
  m.description = c.Bytes();
  m.enabled = c.Flag();
  m.always_on = c.Flag();
  m.active_version = c.Int();
  m.circuit = c.Enum(kCircuits, compute::CircuitStateName, "circuit");
  m.consecutive_failures = static_cast<int>(c.Int());
  m.circuit_opened_ms = c.Int();
  m.last_error = c.Bytes();
  m.created_ms = c.Int();
  m.updated_ms = c.Int();
  return Done(c, std::move(m));
}

Result<compute::VersionRecord> ReadVersionRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::VersionRecord v;
  v.module_id = c.Int();
  v.version_no = c.Int();
  v.language = c.Enum(kLanguages, compute::LanguageName, "language");
  v.sdk_version = c.Bytes();
  v.abi_version = static_cast<int>(c.Int());
  v.source_hash = c.Bytes();
  v.template_name = c.Bytes();
  v.status = c.Enum(kStatuses, compute::CompileStatusName, "compile status");
  v.compile_log = c.Bytes();
  v.compiled_size_bytes = c.Int();
  v.artifact_path = c.Bytes();
  v.cache_hit = c.Flag();
  v.created_ms = c.Int();
  v.compiled_ms = c.Int();
  return Done(c, std::move(v));
}

Result<compute::TriggerRecord> ReadTriggerRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::TriggerRecord t;
  t.id = c.Int();
  t.module_id = c.Int();
  t.type = c.Enum(kTriggerTypes, compute::TriggerTypeName, "trigger type");
  t.tick_hz = c.Real();
  t.on_event = c.Bytes();
  t.event_name = c.Bytes();
  t.debounce_ms = c.Int();
  t.export_name = c.Bytes();
  t.invoke_policy_json = c.Bytes();
  t.contract_json = c.Bytes();
  t.created_ms = c.Int();
  t.updated_ms = c.Int();
  t.entity_type = c.Bytes();
  t.field_name = c.Bytes();
  t.function_name = c.Bytes();
  return Done(c, std::move(t));
}

Result<compute::Policy> ReadPolicyRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::Policy p;
  p.enabled = c.Flag();
  p.max_modules = c.Int();
  p.max_tick_hz = c.Real();
  p.fuel_per_tick = c.Int();
  p.fuel_per_invoke = c.Int();
  p.max_memory_mb = c.Int();
  p.max_run_ms = c.Int();
  p.max_db_ops_per_tick = c.Int();
  p.max_egress_msgs_per_min = c.Int();
  p.max_egress_bytes_per_min = c.Int();
  p.failure_threshold = c.Int();
  p.cooldown_ms = c.Int();
  p.idle_unload_ms = c.Int();
  return Done(c, std::move(p));
}

Result<compute::RunRecord> ReadRunRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::RunRecord r;
  r.id = c.Int();
  r.module_id = c.Int();
  r.module_name = c.Bytes();
  r.version_no = c.Int();
  r.started_ms = c.Int();
  r.source = c.Enum(kSources, compute::TriggerSourceName, "trigger source");
  r.entry = c.Bytes();
  r.success = c.Flag();
  r.duration_us = c.Int();
  r.fuel_used = c.Int();
  r.data_reads = c.Int();
  r.data_writes = c.Int();
  r.egress_msgs = c.Int();
  r.egress_bytes = c.Int();
  r.error_message = c.Bytes();
  r.circuit_action = c.Bytes();
  r.flow_id = c.Bytes();
  return Done(c, std::move(r));
}

Result<compute::UsageRow> ReadUsageRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::UsageRow u;
  u.module_id = c.Int();
  u.minute_ms = c.Int();
  u.ticks = c.Int();
  u.runs = c.Int();
  u.failures = c.Int();
  u.fuel_used = c.Int();
  u.duration_us = c.Int();
  u.cpu_us = c.Int();
  u.compute_units = c.Real();
  u.egress_msgs = c.Int();
  u.egress_bytes = c.Int();
  return Done(c, std::move(u));
}

Result<compute::LogRecord> ReadLogRow(const PgResult& result, int row) {
  Cols c(result, row);
  compute::LogRecord l;
  l.id = c.Int();
  l.module_id = c.Int();
  l.ts_ms = c.Int();
  l.level = static_cast<int>(c.Int());
  l.message = c.Bytes();
  l.source = c.Enum(kSources, compute::TriggerSourceName, "trigger source");
  l.flow_id = c.Bytes();
  return Done(c, std::move(l));
}

}  // namespace tessera::store::pg
