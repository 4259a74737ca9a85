// PgComputeStore: triggers, the policy and the state blob with its
// revision guard (the rest is in pg_compute_store.cc and
// pg_compute_store_records.cc).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compute/compute_store_rules.h"
#include "store/postgres/pg_compute_rows.h"
#include "store/postgres/pg_compute_store.h"

namespace tessera::store {

using compute::Policy;
using compute::StateBlob;
using compute::TriggerRecord;
using pg::PgParam;
using pg::PgResult;

namespace {

std::string What(std::string_view action) {
  return "postgres compute store: " + std::string(action);
}

std::string Select(const char* columns, std::string_view rest) {
  return std::string("SELECT ") + columns + " " + std::string(rest);
}

}  // namespace

// --- triggers

Result<TriggerRecord> PgComputeStore::UpsertTrigger(
    const TriggerRecord& trigger) {
  const int64_t now = NowMs();
  const std::string key = compute::TriggerKey(trigger);
  const std::string what = What("upsert compute trigger");
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<TriggerRecord> out;
  Status status = conn_->InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(LockModuleLocked(trigger.module_id, what));
    Result<PgResult> row = conn_->Exec(
        "INSERT INTO compute_triggers(module_id, trigger_key, type, tick_hz, "
        "on_event, event_name, debounce_ms, export_name, invoke_policy, "
        "contract, created_ms, updated_ms, entity_type, field_name, "
        "function_name) "
        "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, "
        "$14) ON CONFLICT (module_id, trigger_key) DO UPDATE SET "
        "type = EXCLUDED.type, tick_hz = EXCLUDED.tick_hz, "
        "on_event = EXCLUDED.on_event, event_name = EXCLUDED.event_name, "
        "debounce_ms = EXCLUDED.debounce_ms, "
        "export_name = EXCLUDED.export_name, "
        "invoke_policy = EXCLUDED.invoke_policy, "
        "contract = EXCLUDED.contract, updated_ms = EXCLUDED.updated_ms, "
        "entity_type = EXCLUDED.entity_type, "
        "field_name = EXCLUDED.field_name, "
        "function_name = EXCLUDED.function_name RETURNING " +
            std::string(pg::kTriggerColumns),
        {PgParam::Int(trigger.module_id), PgParam::Bytes(key),
         PgParam::Bytes(compute::TriggerTypeName(trigger.type)),
         PgParam::Double(trigger.tick_hz), PgParam::Bytes(trigger.on_event),
         PgParam::Bytes(trigger.event_name), PgParam::Int(trigger.debounce_ms),
         PgParam::Bytes(trigger.export_name),
         PgParam::Bytes(trigger.invoke_policy_json),
         PgParam::Bytes(trigger.contract_json), PgParam::Int(now),
         PgParam::Bytes(trigger.entity_type),
         PgParam::Bytes(trigger.field_name),
         PgParam::Bytes(trigger.function_name)},
        what);
    if (!row.ok()) return row.status();
    Result<TriggerRecord> t = pg::ReadTriggerRow(*row, 0);
    if (!t.ok()) return t.status();
    out = std::move(t).value();
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return *std::move(out);
}

Result<std::vector<TriggerRecord>> PgComputeStore::ListTriggers(
    int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string what = What("list compute triggers");
  Result<PgResult> rows =
      module_id > 0
          ? conn_->Exec(Select(pg::kTriggerColumns,
                               "FROM compute_triggers WHERE module_id = $1 "
                               "ORDER BY id"),
                        {PgParam::Int(module_id)}, what)
          : conn_->Exec(Select(pg::kTriggerColumns,
                               "FROM compute_triggers ORDER BY id"),
                        {}, what);
  if (!rows.ok()) return rows.status();
  std::vector<TriggerRecord> out;
  for (int i = 0; i < rows->rows(); ++i) {
    Result<TriggerRecord> t = pg::ReadTriggerRow(*rows, i);
    if (!t.ok()) return t.status();
    out.push_back(std::move(t).value());
  }
  return out;
}

Status PgComputeStore::DeleteTrigger(int64_t trigger_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> done =
      conn_->Exec("DELETE FROM compute_triggers WHERE id = $1",
                  {PgParam::Int(trigger_id)}, What("delete compute trigger"));
  if (!done.ok()) return done.status();
  if (done->affected() == 0) return compute::NoComputeTrigger(trigger_id);
  return Status::Ok();
}

// --- policy

Result<std::optional<Policy>> PgComputeStore::GetPolicy() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> row = conn_->Exec(
      Select(pg::kPolicyColumns, "FROM compute_policy WHERE id = 1"), {},
      What("read compute policy"));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::optional<Policy>();
  Result<Policy> p = pg::ReadPolicyRow(*row, 0);
  if (!p.ok()) return p.status();
  return std::optional<Policy>(*p);
}

Status PgComputeStore::SetPolicy(const Policy& p) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->Run(
      "INSERT INTO compute_policy(id, " + std::string(pg::kPolicyColumns) +
          ", updated_ms) VALUES(1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
          "$11, $12, $13, $14) ON CONFLICT (id) DO UPDATE SET "
          "enabled = EXCLUDED.enabled, max_modules = EXCLUDED.max_modules, "
          "max_tick_hz = EXCLUDED.max_tick_hz, "
          "fuel_per_tick = EXCLUDED.fuel_per_tick, "
          "fuel_per_invoke = EXCLUDED.fuel_per_invoke, "
          "max_memory_mb = EXCLUDED.max_memory_mb, "
          "max_run_ms = EXCLUDED.max_run_ms, "
          "max_db_ops_per_tick = EXCLUDED.max_db_ops_per_tick, "
          "max_egress_msgs_per_min = EXCLUDED.max_egress_msgs_per_min, "
          "max_egress_bytes_per_min = EXCLUDED.max_egress_bytes_per_min, "
          "failure_threshold = EXCLUDED.failure_threshold, "
          "cooldown_ms = EXCLUDED.cooldown_ms, "
          "idle_unload_ms = EXCLUDED.idle_unload_ms, "
          "updated_ms = EXCLUDED.updated_ms",
      {PgParam::Int(p.enabled ? 1 : 0), PgParam::Int(p.max_modules),
       PgParam::Double(p.max_tick_hz), PgParam::Int(p.fuel_per_tick),
       PgParam::Int(p.fuel_per_invoke), PgParam::Int(p.max_memory_mb),
       PgParam::Int(p.max_run_ms), PgParam::Int(p.max_db_ops_per_tick),
       PgParam::Int(p.max_egress_msgs_per_min),
       PgParam::Int(p.max_egress_bytes_per_min),
       PgParam::Int(p.failure_threshold), PgParam::Int(p.cooldown_ms),
       PgParam::Int(p.idle_unload_ms), PgParam::Int(now)},
      What("set compute policy"));
}

// --- the state blob

Result<StateBlob> PgComputeStore::GetState(int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> row = conn_->Exec(
      "SELECT bytes, revision FROM compute_state WHERE module_id = $1",
      {PgParam::Int(module_id)}, What("read compute state"));
  if (!row.ok()) return row.status();
  StateBlob blob;
  if (row->rows() == 0) return blob;
  Result<std::string> bytes = row->Bytes(0, 0);
  if (!bytes.ok()) return bytes.status();
  Result<int64_t> revision = row->Int64(0, 1);
  if (!revision.ok()) return revision.status();
  blob.bytes = std::move(bytes).value();
  blob.revision = *revision;
  return blob;
}

Result<int64_t> PgComputeStore::SetState(int64_t module_id,
                                         std::string_view bytes,
                                         int64_t expected_revision,
                                         bool lease_holder) {
  const int64_t now = NowMs();
  const std::string what = What("write compute state");
  std::lock_guard<std::mutex> lock(mu_);
  int64_t revision = 0;
  Status status = conn_->InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(LockModuleLocked(module_id, what));
    Result<PgResult> row =
        conn_->Exec("SELECT revision FROM compute_state WHERE module_id = $1",
                    {PgParam::Int(module_id)}, what);
    if (!row.ok()) return row.status();
    revision = 0;
    if (row->rows() > 0) {
      Result<int64_t> stored = row->Int64(0, 0);
      if (!stored.ok()) return stored.status();
      revision = *stored;
    }
    if (!lease_holder && revision != expected_revision) {
      return compute::StaleComputeState(module_id, revision, expected_revision);
    }
    ++revision;
    return conn_->Run(
        "INSERT INTO compute_state(module_id, bytes, revision, updated_ms) "
        "VALUES($1, $2, $3, $4) ON CONFLICT (module_id) DO UPDATE SET "
        "bytes = EXCLUDED.bytes, revision = EXCLUDED.revision, "
        "updated_ms = EXCLUDED.updated_ms",
        {PgParam::Int(module_id), PgParam::Bytes(bytes), PgParam::Int(revision),
         PgParam::Int(now)},
        what);
  });
  if (!status.ok()) return status;
  return revision;
}

}  // namespace tessera::store
