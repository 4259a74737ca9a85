#include "store/schema.h"

#include <string>
#include <utility>

#include "store/directories.h"

namespace tessera::store {
namespace {

struct Migration {
  int64_t version;
  const char* sql;
};

// Append only: a released migration is never edited.
constexpr Migration kMigrations[] = {
    {1, R"sql(
      CREATE TABLE shards(
        id TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL,
        params BLOB NOT NULL,
        status TEXT NOT NULL,
        error TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE TABLE saves(
        shard_id TEXT PRIMARY KEY NOT NULL,
        state BLOB NOT NULL,
        saved_ms INTEGER NOT NULL);
    )sql"},
    {2, R"sql(
      CREATE TABLE transfers(
        id TEXT PRIMARY KEY NOT NULL,
        from_shard TEXT NOT NULL,
        to_shard TEXT NOT NULL,
        subscriber TEXT NOT NULL,
        claims TEXT NOT NULL,
        state BLOB NOT NULL,
        step INTEGER NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE INDEX transfers_by_source
        ON transfers(from_shard, subscriber, step);
    )sql"},
    {3, R"sql(
      CREATE TABLE compute_modules(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        always_on INTEGER NOT NULL,
        active_version INTEGER NOT NULL,
        circuit TEXT NOT NULL,
        consecutive_failures INTEGER NOT NULL,
        circuit_opened_ms INTEGER NOT NULL,
        last_error TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE TABLE compute_versions(
        module_id INTEGER NOT NULL
          REFERENCES compute_modules(id) ON DELETE CASCADE,
        version_no INTEGER NOT NULL,
        language TEXT NOT NULL,
        sdk_version TEXT NOT NULL,
        abi_version INTEGER NOT NULL,
        source_hash TEXT NOT NULL,
        template_name TEXT NOT NULL,
        status TEXT NOT NULL,
        compile_log BLOB NOT NULL,
        compiled_size_bytes INTEGER NOT NULL,
        artifact_path TEXT NOT NULL,
        cache_hit INTEGER NOT NULL,
        created_ms INTEGER NOT NULL,
        compiled_ms INTEGER NOT NULL,
        PRIMARY KEY(module_id, version_no));
      CREATE INDEX compute_versions_by_status ON compute_versions(status);
      CREATE INDEX compute_versions_by_hash
        ON compute_versions(source_hash, status);
      CREATE TABLE compute_version_files(
        module_id INTEGER NOT NULL,
        version_no INTEGER NOT NULL,
        path TEXT NOT NULL,
        contents BLOB NOT NULL,
        PRIMARY KEY(module_id, version_no, path),
        FOREIGN KEY(module_id, version_no)
          REFERENCES compute_versions(module_id, version_no)
          ON DELETE CASCADE);
      CREATE TABLE compute_triggers(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        module_id INTEGER NOT NULL
          REFERENCES compute_modules(id) ON DELETE CASCADE,
        trigger_key TEXT NOT NULL,
        type TEXT NOT NULL,
        tick_hz REAL NOT NULL,
        on_event TEXT NOT NULL,
        event_name TEXT NOT NULL,
        debounce_ms INTEGER NOT NULL,
        export_name TEXT NOT NULL,
        invoke_policy TEXT NOT NULL,
        contract TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL,
        UNIQUE(module_id, trigger_key));
      CREATE TABLE compute_policy(
        id INTEGER PRIMARY KEY CHECK(id = 1),
        enabled INTEGER NOT NULL,
        max_modules INTEGER NOT NULL,
        max_tick_hz REAL NOT NULL,
        fuel_per_tick INTEGER NOT NULL,
        fuel_per_invoke INTEGER NOT NULL,
        max_memory_mb INTEGER NOT NULL,
        max_run_ms INTEGER NOT NULL,
        max_db_ops_per_tick INTEGER NOT NULL,
        max_egress_msgs_per_min INTEGER NOT NULL,
        max_egress_bytes_per_min INTEGER NOT NULL,
        failure_threshold INTEGER NOT NULL,
        cooldown_ms INTEGER NOT NULL,
        idle_unload_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE TABLE compute_runs(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        module_id INTEGER NOT NULL,
        module_name TEXT NOT NULL,
        version_no INTEGER NOT NULL,
        started_ms INTEGER NOT NULL,
        source TEXT NOT NULL,
        entry TEXT NOT NULL,
        success INTEGER NOT NULL,
        duration_us INTEGER NOT NULL,
        fuel_used INTEGER NOT NULL,
        data_reads INTEGER NOT NULL,
        data_writes INTEGER NOT NULL,
        egress_msgs INTEGER NOT NULL,
        egress_bytes INTEGER NOT NULL,
        error_message BLOB NOT NULL,
        circuit_action TEXT NOT NULL,
        flow_id TEXT NOT NULL);
      CREATE INDEX compute_runs_by_time ON compute_runs(started_ms);
      CREATE INDEX compute_runs_by_module
        ON compute_runs(module_id, started_ms);
      CREATE INDEX compute_runs_by_flow ON compute_runs(flow_id, started_ms);
      CREATE TABLE compute_usage(
        module_id INTEGER NOT NULL,
        minute_ms INTEGER NOT NULL,
        ticks INTEGER NOT NULL,
        runs INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        fuel_used INTEGER NOT NULL,
        duration_us INTEGER NOT NULL,
        cpu_us INTEGER NOT NULL,
        compute_units REAL NOT NULL,
        egress_msgs INTEGER NOT NULL,
        egress_bytes INTEGER NOT NULL,
        PRIMARY KEY(module_id, minute_ms));
      CREATE INDEX compute_usage_by_minute ON compute_usage(minute_ms);
      CREATE TABLE compute_logs(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        module_id INTEGER NOT NULL,
        ts_ms INTEGER NOT NULL,
        level INTEGER NOT NULL,
        message BLOB NOT NULL,
        source TEXT NOT NULL,
        flow_id TEXT NOT NULL);
      CREATE INDEX compute_logs_by_time ON compute_logs(ts_ms);
      CREATE INDEX compute_logs_by_module ON compute_logs(module_id, ts_ms);
      CREATE TABLE compute_state(
        module_id INTEGER PRIMARY KEY NOT NULL
          REFERENCES compute_modules(id) ON DELETE CASCADE,
        bytes BLOB NOT NULL,
        revision INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
    )sql"},
    {4, R"sql(
      CREATE TABLE data_schema(
        id INTEGER PRIMARY KEY CHECK(id = 1),
        schema_json TEXT NOT NULL,
        applied_ms INTEGER NOT NULL);
      CREATE TABLE data_changes(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ts_ms INTEGER NOT NULL,
        op TEXT NOT NULL,
        type TEXT NOT NULL,
        row_id TEXT NOT NULL,
        row_json TEXT NOT NULL,
        fields_json TEXT NOT NULL,
        origin TEXT NOT NULL);
      CREATE INDEX data_changes_by_time ON data_changes(ts_ms);
      CREATE TABLE data_calls(
        key TEXT PRIMARY KEY NOT NULL,
        function TEXT NOT NULL,
        args_hash TEXT NOT NULL,
        ok INTEGER NOT NULL,
        result_json TEXT NOT NULL,
        error TEXT NOT NULL,
        created_ms INTEGER NOT NULL);
      CREATE INDEX data_calls_by_time ON data_calls(created_ms);
      ALTER TABLE compute_triggers
        ADD COLUMN entity_type TEXT NOT NULL DEFAULT '';
      ALTER TABLE compute_triggers
        ADD COLUMN field_name TEXT NOT NULL DEFAULT '';
      ALTER TABLE compute_triggers
        ADD COLUMN function_name TEXT NOT NULL DEFAULT '';
    )sql"},
    {5, R"sql(
      CREATE TABLE realms(
        key TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        head_version INTEGER NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE INDEX realms_by_kind ON realms(kind, key);
      CREATE TABLE realm_log(
        key TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        version INTEGER NOT NULL,
        patch BLOB NOT NULL,
        PRIMARY KEY(key, epoch, version)) WITHOUT ROWID;
      CREATE TABLE realm_snapshots(
        key TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        version INTEGER NOT NULL,
        schema_hash TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY(key, epoch, version));
    )sql"},
    {6, R"sql(
      CREATE TABLE realm_alarms(
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        due_ms INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        PRIMARY KEY(key, name)) WITHOUT ROWID;
    )sql"},
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion,
              "one migration per schema version");

Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}

Result<int64_t> QueryInt(SqliteDb& db, const char* sql, const char* what) {
  Result<std::unique_ptr<SqliteStatement>> stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  ScopedReset reset(**stmt);
  Result<bool> row = (*stmt)->Step(what);
  if (!row.ok()) return row.status();
  return *row ? (*stmt)->ColumnInt64(0) : 0;
}

Status MigrateLocked(SqliteDb& db, int64_t now_unix_ms) {
  Result<int64_t> has_version_table =
      QueryInt(db,
               "SELECT count(*) FROM sqlite_master "
               "WHERE type = 'table' AND name = 'schema_version'",
               "read schema");
  if (!has_version_table.ok()) return has_version_table.status();
  if (*has_version_table == 0) {
    Result<int64_t> other_tables = QueryInt(
        db,
        "SELECT count(*) FROM sqlite_master "
        "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        "read schema");
    if (!other_tables.ok()) return other_tables.status();
    if (*other_tables > 0) {
      return FailedPrecondition(
          "sqlite store " + db.path() +
          ": this SQLite database is not a tessera store (it has tables but "
          "no schema_version); refusing to modify it");
    }
    TESSERA_RETURN_IF_ERROR(
        db.Exec("CREATE TABLE schema_version("
                "version INTEGER PRIMARY KEY NOT NULL, "
                "applied_ms INTEGER NOT NULL)",
                "create schema_version"));
  }

  Result<int64_t> current =
      QueryInt(db, "SELECT coalesce(max(version), 0) FROM schema_version",
               "read schema version");
  if (!current.ok()) return current.status();
  if (*current > kSchemaVersion) {
    return FailedPrecondition(
        "sqlite store " + db.path() + " has schema version " +
        std::to_string(*current) + ", newer than this tessera supports (" +
        std::to_string(kSchemaVersion) +
        "): it was written by a newer release; upgrade tessera or use "
        "another store");
  }

  Result<std::unique_ptr<SqliteStatement>> record = db.Prepare(
      "INSERT INTO schema_version(version, applied_ms) VALUES(?1, ?2)");
  if (!record.ok()) return record.status();
  for (const Migration& m : kMigrations) {
    if (m.version <= *current) continue;
    std::string what = "migrate to schema version " + std::to_string(m.version);
    TESSERA_RETURN_IF_ERROR(db.Exec(m.sql, what));
    ScopedReset reset(**record);
    TESSERA_RETURN_IF_ERROR((*record)->BindInt64(1, m.version));
    TESSERA_RETURN_IF_ERROR((*record)->BindInt64(2, now_unix_ms));
    TESSERA_RETURN_IF_ERROR((*record)->Run(what));
  }
  return Status::Ok();
}

}  // namespace

Status MigrateSchema(SqliteDb& db, int64_t now_unix_ms) {
  // IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so
  // the version read below cannot go stale before the migration commits.
  TESSERA_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE", "begin migration"));
  Status st = MigrateLocked(db, now_unix_ms);
  if (st.ok()) st = db.Exec("COMMIT", "commit migration");
  if (!st.ok() && !db.autocommit()) {
    (void)db.Exec("ROLLBACK", "roll back migration");
  }
  return st;
}

Result<std::unique_ptr<SqliteDb>> OpenStoreDatabase(const std::string& path,
                                                    int busy_timeout_ms,
                                                    int64_t now_unix_ms) {
  const bool in_memory = path == ":memory:";
  if (!in_memory) TESSERA_RETURN_IF_ERROR(CreateParentDirectories(path));
  Result<std::unique_ptr<SqliteDb>> opened = SqliteDb::Open(path);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<SqliteDb> db = std::move(opened).value();

  TESSERA_RETURN_IF_ERROR(
      db->Exec("PRAGMA busy_timeout = " + std::to_string(busy_timeout_ms),
               "set busy_timeout"));
  // The first statement that reads the file: a file that is not a database
  // fails here. WAL is persistent in the file; anything else (a filesystem
  // without shared memory) is refused rather than silently weaker.
  Result<std::string> mode =
      db->QueryText("PRAGMA journal_mode = WAL", "set WAL journal mode");
  if (!mode.ok()) return mode.status();
  const char* want_mode = in_memory ? "memory" : "wal";
  if (*mode != want_mode) {
    return IoError("sqlite store " + path +
                   ": cannot use WAL journal mode (SQLite kept \"" + *mode +
                   "\")");
  }
  TESSERA_RETURN_IF_ERROR(
      db->Exec("PRAGMA synchronous = FULL", "set synchronous=FULL"));
  TESSERA_RETURN_IF_ERROR(
      db->Exec("PRAGMA foreign_keys = ON", "enable foreign keys"));
  // Bytes of log kept after a checkpoint; the rest is truncated.
  TESSERA_RETURN_IF_ERROR(
      db->Exec("PRAGMA journal_size_limit = 67108864", "set journal size"));
  TESSERA_RETURN_IF_ERROR(MigrateSchema(*db, now_unix_ms));
  return db;
}

}  // namespace tessera::store
