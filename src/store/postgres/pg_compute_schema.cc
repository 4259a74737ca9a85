#include "store/postgres/pg_compute_schema.h"

#include <string>

#include "store/postgres/pg_realm_schema.h"

namespace tessera::store::pg {

namespace {

constexpr const char* kCreateTables = R"sql(
  CREATE TABLE IF NOT EXISTS tessera_schema(
    component TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS compute_modules(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name BYTEA NOT NULL UNIQUE,
    description BYTEA NOT NULL,
    enabled BIGINT NOT NULL,
    always_on BIGINT NOT NULL,
    active_version BIGINT NOT NULL,
    circuit BYTEA NOT NULL,
    consecutive_failures BIGINT NOT NULL,
    circuit_opened_ms BIGINT NOT NULL,
    last_error BYTEA NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS compute_versions(
    module_id BIGINT NOT NULL
      REFERENCES compute_modules(id) ON DELETE CASCADE,
    version_no BIGINT NOT NULL,
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    language BYTEA NOT NULL,
    sdk_version BYTEA NOT NULL,
    abi_version BIGINT NOT NULL,
    source_hash BYTEA NOT NULL,
    template_name BYTEA NOT NULL,
    status BYTEA NOT NULL,
    compile_log BYTEA NOT NULL,
    compiled_size_bytes BIGINT NOT NULL,
    artifact_path BYTEA NOT NULL,
    cache_hit BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    compiled_ms BIGINT NOT NULL,
    PRIMARY KEY(module_id, version_no));
  CREATE INDEX IF NOT EXISTS compute_versions_by_status
    ON compute_versions(status, seq);
  CREATE INDEX IF NOT EXISTS compute_versions_by_hash
    ON compute_versions(source_hash, status, seq);
  CREATE TABLE IF NOT EXISTS compute_version_files(
    module_id BIGINT NOT NULL,
    version_no BIGINT NOT NULL,
    path BYTEA NOT NULL,
    contents BYTEA NOT NULL,
    PRIMARY KEY(module_id, version_no, path),
    FOREIGN KEY(module_id, version_no)
      REFERENCES compute_versions(module_id, version_no) ON DELETE CASCADE);
  CREATE TABLE IF NOT EXISTS compute_triggers(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    module_id BIGINT NOT NULL
      REFERENCES compute_modules(id) ON DELETE CASCADE,
    trigger_key BYTEA NOT NULL,
    type BYTEA NOT NULL,
    tick_hz DOUBLE PRECISION NOT NULL,
    on_event BYTEA NOT NULL,
    event_name BYTEA NOT NULL,
    debounce_ms BIGINT NOT NULL,
    export_name BYTEA NOT NULL,
    invoke_policy BYTEA NOT NULL,
    contract BYTEA NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    entity_type BYTEA NOT NULL,
    field_name BYTEA NOT NULL,
    function_name BYTEA NOT NULL,
    UNIQUE(module_id, trigger_key));
  CREATE TABLE IF NOT EXISTS compute_policy(
    id BIGINT PRIMARY KEY CHECK(id = 1),
    enabled BIGINT NOT NULL,
    max_modules BIGINT NOT NULL,
    max_tick_hz DOUBLE PRECISION NOT NULL,
    fuel_per_tick BIGINT NOT NULL,
    fuel_per_invoke BIGINT NOT NULL,
    max_memory_mb BIGINT NOT NULL,
    max_run_ms BIGINT NOT NULL,
    max_db_ops_per_tick BIGINT NOT NULL,
    max_egress_msgs_per_min BIGINT NOT NULL,
    max_egress_bytes_per_min BIGINT NOT NULL,
    failure_threshold BIGINT NOT NULL,
    cooldown_ms BIGINT NOT NULL,
    idle_unload_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS compute_runs(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    module_id BIGINT NOT NULL,
    module_name BYTEA NOT NULL,
    version_no BIGINT NOT NULL,
    started_ms BIGINT NOT NULL,
    source BYTEA NOT NULL,
    entry BYTEA NOT NULL,
    success BIGINT NOT NULL,
    duration_us BIGINT NOT NULL,
    fuel_used BIGINT NOT NULL,
    data_reads BIGINT NOT NULL,
    data_writes BIGINT NOT NULL,
    egress_msgs BIGINT NOT NULL,
    egress_bytes BIGINT NOT NULL,
    error_message BYTEA NOT NULL,
    circuit_action BYTEA NOT NULL,
    flow_id BYTEA NOT NULL);
  CREATE INDEX IF NOT EXISTS compute_runs_by_time ON compute_runs(started_ms);
  CREATE INDEX IF NOT EXISTS compute_runs_by_module
    ON compute_runs(module_id, started_ms);
  CREATE INDEX IF NOT EXISTS compute_runs_by_flow
    ON compute_runs(flow_id, started_ms);
  CREATE TABLE IF NOT EXISTS compute_usage(
    module_id BIGINT NOT NULL,
    minute_ms BIGINT NOT NULL,
    ticks BIGINT NOT NULL,
    runs BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    fuel_used BIGINT NOT NULL,
    duration_us BIGINT NOT NULL,
    cpu_us BIGINT NOT NULL,
    compute_units DOUBLE PRECISION NOT NULL,
    egress_msgs BIGINT NOT NULL,
    egress_bytes BIGINT NOT NULL,
    PRIMARY KEY(module_id, minute_ms));
  CREATE INDEX IF NOT EXISTS compute_usage_by_minute
    ON compute_usage(minute_ms);
  CREATE TABLE IF NOT EXISTS compute_logs(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    module_id BIGINT NOT NULL,
    ts_ms BIGINT NOT NULL,
    level BIGINT NOT NULL,
    message BYTEA NOT NULL,
    source BYTEA NOT NULL,
    flow_id BYTEA NOT NULL);
  CREATE INDEX IF NOT EXISTS compute_logs_by_time ON compute_logs(ts_ms);
  CREATE INDEX IF NOT EXISTS compute_logs_by_module
    ON compute_logs(module_id, ts_ms);
  CREATE TABLE IF NOT EXISTS compute_state(
    module_id BIGINT PRIMARY KEY NOT NULL
      REFERENCES compute_modules(id) ON DELETE CASCADE,
    bytes BYTEA NOT NULL,
    revision BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL);
)sql";

}  // namespace

Status EnsureComputeSchema(PgConn& conn) {
  return EnsureComponentSchema(conn, "compute", "compute",
                               kComputeSchemaVersion, kCreateTables);
}

}  // namespace tessera::store::pg
