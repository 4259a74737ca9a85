#include "store/postgres/pg_realm_schema.h"

#include <string>

namespace tessera::store::pg {

namespace {

constexpr const char* kCreateTables = R"sql(
  CREATE TABLE IF NOT EXISTS tessera_schema(
    component TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS realms(
    key TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    head_version BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL);
  CREATE INDEX IF NOT EXISTS realms_by_kind ON realms(kind, key);
  CREATE TABLE IF NOT EXISTS realm_log(
    key TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    version BIGINT NOT NULL,
    patch BYTEA NOT NULL,
    PRIMARY KEY(key, epoch, version));
  CREATE TABLE IF NOT EXISTS realm_snapshots(
    key TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    version BIGINT NOT NULL,
    schema_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY(key, epoch, version));
  CREATE TABLE IF NOT EXISTS realm_alarms(
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    due_ms BIGINT NOT NULL,
    failures INTEGER NOT NULL,
    PRIMARY KEY(key, name));
)sql";

}  // namespace

Status EnsureComponentSchema(PgConn& conn, std::string_view component,
                             std::string_view tables, int64_t version,
                             const std::string& create_script) {
  const std::string what =
      "postgres: create the " + std::string(tables) + " tables";
  return conn.InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(conn.Run("SELECT pg_advisory_xact_lock($1)",
                                     {PgParam::Int(kRealmSchemaLock)}, what));
    TESSERA_RETURN_IF_ERROR(conn.RunScript(create_script, what));
    Result<PgResult> row =
        conn.Exec("SELECT version FROM tessera_schema WHERE component = $1",
                  {PgParam::Text(component)}, what);
    if (!row.ok()) return row.status();
    if (row->rows() == 0) {
      return conn.Run(
          "INSERT INTO tessera_schema(component, version) VALUES($1, $2)",
          {PgParam::Text(component), PgParam::Int(version)}, what);
    }
    Result<int64_t> recorded = row->Int64(0, 0);
    if (!recorded.ok()) return recorded.status();
    if (*recorded > version) {
      return Status(
          StatusCode::kFailedPrecondition,
          what + ": the database has version " + std::to_string(*recorded) +
              " of the " + std::string(tables) +
              " tables, this build knows up to " + std::to_string(version));
    }
    return Status::Ok();
  });
}

Status EnsureRealmSchema(PgConn& conn) {
  return EnsureComponentSchema(conn, "realms", "realm", kRealmSchemaVersion,
                               kCreateTables);
}

}  // namespace tessera::store::pg
