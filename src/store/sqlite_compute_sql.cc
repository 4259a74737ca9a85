#include "store/sqlite_compute_sql.h"

#include <string>

namespace tessera::store {
namespace {

using compute::CircuitState;
using compute::CompileStatus;
using compute::Language;
using compute::TriggerSource;
using compute::TriggerType;

constexpr char kModuleColumns[] =
    "SELECT id, name, description, enabled, always_on, active_version, "
    "circuit, consecutive_failures, circuit_opened_ms, last_error, "
    "created_ms, updated_ms FROM compute_modules ";
constexpr char kVersionColumns[] =
    "SELECT module_id, version_no, language, sdk_version, abi_version, "
    "source_hash, template_name, status, compile_log, compiled_size_bytes, "
    "artifact_path, cache_hit, created_ms, compiled_ms FROM compute_versions ";
constexpr char kTriggerColumns[] =
    "SELECT id, module_id, type, tick_hz, on_event, event_name, debounce_ms, "
    "export_name, invoke_policy, contract, created_ms, updated_ms, "
    "entity_type, field_name, function_name "
    "FROM compute_triggers ";
constexpr char kRunColumns[] =
    "SELECT id, module_id, module_name, version_no, started_ms, source, "
    "entry, success, duration_us, fuel_used, data_reads, data_writes, "
    "egress_msgs, egress_bytes, error_message, circuit_action, flow_id "
    "FROM compute_runs ";
constexpr char kUsageColumns[] =
    "SELECT module_id, minute_ms, ticks, runs, failures, fuel_used, "
    "duration_us, cpu_us, compute_units, egress_msgs, egress_bytes "
    "FROM compute_usage ";
constexpr char kLogColumns[] =
    "SELECT id, module_id, ts_ms, level, message, source, flow_id "
    "FROM compute_logs ";

// The enum value whose Name() is `text`.
template <typename E, size_t N>
Result<E> ParseName(const std::string& text, const E (&values)[N],
                    const char* (*name)(E), const char* what,
                    const std::string& path) {
  for (E value : values) {
    if (text == name(value)) return value;
  }
  return IoError("sqlite store " + path + ": unknown " + what + " \"" + text +
                 "\" in the compute tables");
}

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

}  // namespace

Status PrepareComputeStatements(SqliteDb& db, ComputeStatements& s) {
  const std::string modules = kModuleColumns;
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.upsert_module,
      "INSERT INTO compute_modules(name, description, enabled, always_on, "
      "active_version, circuit, consecutive_failures, circuit_opened_ms, "
      "last_error, created_ms, updated_ms) "
      "VALUES(?1, ?2, 0, ?3, 0, 'closed', 0, 0, '', ?4, ?4) "
      "ON CONFLICT(name) DO UPDATE SET description = excluded.description, "
      "always_on = excluded.always_on, updated_ms = excluded.updated_ms"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.module_by_name, modules + "WHERE name = ?1"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.module_exists, "SELECT 1 FROM compute_modules WHERE id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.list_modules, modules + "ORDER BY name"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.update_module_state,
      "UPDATE compute_modules SET enabled = ?2, active_version = ?3, "
      "circuit = ?4, consecutive_failures = ?5, circuit_opened_ms = ?6, "
      "last_error = ?7, updated_ms = ?8 WHERE id = ?1"));
  TESSERA_RETURN_IF_ERROR(Prepare(db, s.delete_module,
                                  "DELETE FROM compute_modules WHERE id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_files,
              "DELETE FROM compute_version_files WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_versions,
              "DELETE FROM compute_versions WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_triggers,
              "DELETE FROM compute_triggers WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_runs,
              "DELETE FROM compute_runs WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_usage,
              "DELETE FROM compute_usage WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_logs,
              "DELETE FROM compute_logs WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_module_state,
              "DELETE FROM compute_state WHERE module_id = ?1"));

  const std::string versions = kVersionColumns;
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.next_version_no,
              "SELECT coalesce(max(version_no), 0) + 1 FROM compute_versions "
              "WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.insert_version,
      "INSERT INTO compute_versions(module_id, version_no, language, "
      "sdk_version, abi_version, source_hash, template_name, status, "
      "compile_log, compiled_size_bytes, artifact_path, cache_hit, "
      "created_ms, compiled_ms) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.insert_file,
              "INSERT INTO compute_version_files(module_id, version_no, path, "
              "contents) VALUES(?1, ?2, ?3, ?4)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.get_version,
              versions + "WHERE module_id = ?1 AND version_no = ?2"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.files_of,
              "SELECT path, contents FROM compute_version_files "
              "WHERE module_id = ?1 AND version_no = ?2 ORDER BY path"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.list_versions,
      versions + "WHERE module_id = ?1 ORDER BY version_no DESC LIMIT ?2"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.unfinished_versions,
      versions + "WHERE status IN ('pending', 'compiling') ORDER BY rowid"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.update_compile,
              "UPDATE compute_versions SET status = ?3, compile_log = ?4, "
              "compiled_size_bytes = ?5, artifact_path = ?6, cache_hit = ?7, "
              "compiled_ms = ?8 WHERE module_id = ?1 AND version_no = ?2"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.find_compiled,
              versions + "WHERE source_hash = ?1 AND status = 'succeeded' "
                         "ORDER BY rowid DESC LIMIT 1"));

  const std::string triggers = kTriggerColumns;
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.upsert_trigger,
      "INSERT INTO compute_triggers(module_id, trigger_key, type, tick_hz, "
      "on_event, event_name, debounce_ms, export_name, invoke_policy, "
      "contract, created_ms, updated_ms, entity_type, field_name, "
      "function_name) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, "
      "?14) "
      "ON CONFLICT(module_id, trigger_key) DO UPDATE SET "
      "type = excluded.type, tick_hz = excluded.tick_hz, "
      "on_event = excluded.on_event, event_name = excluded.event_name, "
      "debounce_ms = excluded.debounce_ms, "
      "export_name = excluded.export_name, "
      "invoke_policy = excluded.invoke_policy, "
      "contract = excluded.contract, updated_ms = excluded.updated_ms, "
      "entity_type = excluded.entity_type, field_name = excluded.field_name, "
      "function_name = excluded.function_name"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.trigger_by_key,
              triggers + "WHERE module_id = ?1 AND trigger_key = ?2"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.list_triggers, triggers + "WHERE module_id = ?1 ORDER BY id"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.list_all_triggers, triggers + "ORDER BY id"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.delete_trigger, "DELETE FROM compute_triggers WHERE id = ?1"));

  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.get_policy,
      "SELECT enabled, max_modules, max_tick_hz, fuel_per_tick, "
      "fuel_per_invoke, max_memory_mb, max_run_ms, max_db_ops_per_tick, "
      "max_egress_msgs_per_min, max_egress_bytes_per_min, failure_threshold, "
      "cooldown_ms, idle_unload_ms FROM compute_policy WHERE id = 1"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.set_policy,
      "INSERT OR REPLACE INTO compute_policy(id, enabled, max_modules, "
      "max_tick_hz, fuel_per_tick, fuel_per_invoke, max_memory_mb, "
      "max_run_ms, max_db_ops_per_tick, max_egress_msgs_per_min, "
      "max_egress_bytes_per_min, failure_threshold, cooldown_ms, "
      "idle_unload_ms, updated_ms) VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
      "?9, ?10, ?11, ?12, ?13, ?14)"));

  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.insert_run,
      "INSERT INTO compute_runs(module_id, module_name, version_no, "
      "started_ms, source, entry, success, duration_us, fuel_used, "
      "data_reads, data_writes, egress_msgs, egress_bytes, error_message, "
      "circuit_action, flow_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
      "?10, ?11, ?12, ?13, ?14, ?15, ?16)"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.add_usage,
      "INSERT INTO compute_usage(module_id, minute_ms, ticks, runs, failures, "
      "fuel_used, duration_us, cpu_us, compute_units, egress_msgs, "
      "egress_bytes) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
      "ON CONFLICT(module_id, minute_ms) DO UPDATE SET "
      "ticks = ticks + excluded.ticks, runs = runs + excluded.runs, "
      "failures = failures + excluded.failures, "
      "fuel_used = fuel_used + excluded.fuel_used, "
      "duration_us = duration_us + excluded.duration_us, "
      "cpu_us = cpu_us + excluded.cpu_us, "
      "compute_units = compute_units + excluded.compute_units, "
      "egress_msgs = egress_msgs + excluded.egress_msgs, "
      "egress_bytes = egress_bytes + excluded.egress_bytes"));
  const std::string usage = kUsageColumns;
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.list_usage,
      usage + "WHERE module_id = ?1 AND minute_ms >= ?2 ORDER BY minute_ms, "
              "module_id"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.list_all_usage,
              usage + "WHERE minute_ms >= ?1 ORDER BY minute_ms, module_id"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.insert_log,
              "INSERT INTO compute_logs(module_id, ts_ms, level, message, "
              "source, flow_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"));
  const std::string logs = kLogColumns;
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.list_logs,
      logs +
          "WHERE module_id = ?1 AND ts_ms >= ?2 ORDER BY ts_ms DESC, id DESC "
          "LIMIT ?3"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.list_all_logs,
      logs + "WHERE ts_ms >= ?1 ORDER BY ts_ms DESC, id DESC LIMIT ?2"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.prune_runs, "DELETE FROM compute_runs WHERE started_ms < ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.prune_logs, "DELETE FROM compute_logs WHERE ts_ms < ?1"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.prune_usage, "DELETE FROM compute_usage WHERE minute_ms < ?1"));

  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.get_state,
      "SELECT bytes, revision FROM compute_state WHERE module_id = ?1"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.put_state,
      "INSERT INTO compute_state(module_id, bytes, revision, updated_ms) "
      "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(module_id) DO UPDATE SET "
      "bytes = excluded.bytes, revision = excluded.revision, "
      "updated_ms = excluded.updated_ms"));
  return Status::Ok();
}

Result<SqliteStatement*> ListRunsStatement(SqliteDb& db, ComputeStatements& s,
                                           int mask) {
  ComputeStatements::Stmt& stmt = s.list_runs[mask & 7];
  if (stmt == nullptr) {
    std::string sql = std::string(kRunColumns) + "WHERE started_ms >= ?4";
    if (mask & 1) sql += " AND module_id = ?1";
    if (mask & 2) sql += " AND success = ?2";
    if (mask & 4) sql += " AND flow_id = ?3";
    sql += " ORDER BY started_ms DESC, id DESC LIMIT ?5";
    TESSERA_RETURN_IF_ERROR(Prepare(db, stmt, sql));
  }
  return stmt.get();
}

Result<compute::ModuleRecord> ReadModule(SqliteStatement& row,
                                         const std::string& path) {
  compute::ModuleRecord m;
  m.id = row.ColumnInt64(0);
  m.name = row.ColumnBytes(1);
  m.description = row.ColumnBytes(2);
  m.enabled = row.ColumnInt64(3) != 0;
  m.always_on = row.ColumnInt64(4) != 0;
  m.active_version = row.ColumnInt64(5);
  Result<CircuitState> circuit =
      ParseName(row.ColumnBytes(6), kCircuits, compute::CircuitStateName,
                "circuit", path);
  if (!circuit.ok()) return circuit.status();
  m.circuit = *circuit;
  m.consecutive_failures = static_cast<int>(row.ColumnInt64(7));
  m.circuit_opened_ms = row.ColumnInt64(8);
  m.last_error = row.ColumnBytes(9);
  m.created_ms = row.ColumnInt64(10);
  m.updated_ms = row.ColumnInt64(11);
  return m;
}

Result<compute::VersionRecord> ReadVersion(SqliteStatement& row,
                                           const std::string& path) {
  compute::VersionRecord v;
  v.module_id = row.ColumnInt64(0);
  v.version_no = row.ColumnInt64(1);
  Result<Language> language = ParseName(
      row.ColumnBytes(2), kLanguages, compute::LanguageName, "language", path);
  if (!language.ok()) return language.status();
  v.language = *language;
  v.sdk_version = row.ColumnBytes(3);
  v.abi_version = static_cast<int>(row.ColumnInt64(4));
  v.source_hash = row.ColumnBytes(5);
  v.template_name = row.ColumnBytes(6);
  Result<CompileStatus> status =
      ParseName(row.ColumnBytes(7), kStatuses, compute::CompileStatusName,
                "compile status", path);
  if (!status.ok()) return status.status();
  v.status = *status;
  v.compile_log = row.ColumnBytes(8);
  v.compiled_size_bytes = row.ColumnInt64(9);
  v.artifact_path = row.ColumnBytes(10);
  v.cache_hit = row.ColumnInt64(11) != 0;
  v.created_ms = row.ColumnInt64(12);
  v.compiled_ms = row.ColumnInt64(13);
  return v;
}

Result<compute::TriggerRecord> ReadTrigger(SqliteStatement& row,
                                           const std::string& path) {
  compute::TriggerRecord t;
  t.id = row.ColumnInt64(0);
  t.module_id = row.ColumnInt64(1);
  Result<TriggerType> type =
      ParseName(row.ColumnBytes(2), kTriggerTypes, compute::TriggerTypeName,
                "trigger type", path);
  if (!type.ok()) return type.status();
  t.type = *type;
  t.tick_hz = row.ColumnDouble(3);
  t.on_event = row.ColumnBytes(4);
  t.event_name = row.ColumnBytes(5);
  t.debounce_ms = row.ColumnInt64(6);
  t.export_name = row.ColumnBytes(7);
  t.invoke_policy_json = row.ColumnBytes(8);
  t.contract_json = row.ColumnBytes(9);
  t.created_ms = row.ColumnInt64(10);
  t.updated_ms = row.ColumnInt64(11);
  t.entity_type = row.ColumnBytes(12);
  t.field_name = row.ColumnBytes(13);
  t.function_name = row.ColumnBytes(14);
  return t;
}

compute::Policy ReadPolicy(SqliteStatement& row) {
  compute::Policy p;
  p.enabled = row.ColumnInt64(0) != 0;
  p.max_modules = row.ColumnInt64(1);
  p.max_tick_hz = row.ColumnDouble(2);
  p.fuel_per_tick = row.ColumnInt64(3);
  p.fuel_per_invoke = row.ColumnInt64(4);
  p.max_memory_mb = row.ColumnInt64(5);
  p.max_run_ms = row.ColumnInt64(6);
  p.max_db_ops_per_tick = row.ColumnInt64(7);
  p.max_egress_msgs_per_min = row.ColumnInt64(8);
  p.max_egress_bytes_per_min = row.ColumnInt64(9);
  p.failure_threshold = row.ColumnInt64(10);
  p.cooldown_ms = row.ColumnInt64(11);
  p.idle_unload_ms = row.ColumnInt64(12);
  return p;
}

Result<compute::RunRecord> ReadRun(SqliteStatement& row,
                                   const std::string& path) {
  compute::RunRecord r;
  r.id = row.ColumnInt64(0);
  r.module_id = row.ColumnInt64(1);
  r.module_name = row.ColumnBytes(2);
  r.version_no = row.ColumnInt64(3);
  r.started_ms = row.ColumnInt64(4);
  Result<TriggerSource> source =
      ParseName(row.ColumnBytes(5), kSources, compute::TriggerSourceName,
                "trigger source", path);
  if (!source.ok()) return source.status();
  r.source = *source;
  r.entry = row.ColumnBytes(6);
  r.success = row.ColumnInt64(7) != 0;
  r.duration_us = row.ColumnInt64(8);
  r.fuel_used = row.ColumnInt64(9);
  r.data_reads = row.ColumnInt64(10);
  r.data_writes = row.ColumnInt64(11);
  r.egress_msgs = row.ColumnInt64(12);
  r.egress_bytes = row.ColumnInt64(13);
  r.error_message = row.ColumnBytes(14);
  r.circuit_action = row.ColumnBytes(15);
  r.flow_id = row.ColumnBytes(16);
  return r;
}

compute::UsageRow ReadUsage(SqliteStatement& row) {
  compute::UsageRow u;
  u.module_id = row.ColumnInt64(0);
  u.minute_ms = row.ColumnInt64(1);
  u.ticks = row.ColumnInt64(2);
  u.runs = row.ColumnInt64(3);
  u.failures = row.ColumnInt64(4);
  u.fuel_used = row.ColumnInt64(5);
  u.duration_us = row.ColumnInt64(6);
  u.cpu_us = row.ColumnInt64(7);
  u.compute_units = row.ColumnDouble(8);
  u.egress_msgs = row.ColumnInt64(9);
  u.egress_bytes = row.ColumnInt64(10);
  return u;
}

Result<compute::LogRecord> ReadLog(SqliteStatement& row,
                                   const std::string& path) {
  compute::LogRecord l;
  l.id = row.ColumnInt64(0);
  l.module_id = row.ColumnInt64(1);
  l.ts_ms = row.ColumnInt64(2);
  l.level = static_cast<int>(row.ColumnInt64(3));
  l.message = row.ColumnBytes(4);
  Result<TriggerSource> source =
      ParseName(row.ColumnBytes(5), kSources, compute::TriggerSourceName,
                "trigger source", path);
  if (!source.ok()) return source.status();
  l.source = *source;
  l.flow_id = row.ColumnBytes(6);
  return l;
}

}  // namespace tessera::store
