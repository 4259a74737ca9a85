#include "store/postgres/pg_store_schema.h"

#include <string>

#include "store/postgres/pg_realm_schema.h"

namespace tessera::store::pg {

namespace {

constexpr const char* kCreateTables = R"sql(
  CREATE TABLE IF NOT EXISTS tessera_schema(
    component TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS shards(
    id BYTEA PRIMARY KEY NOT NULL,
    kind BYTEA NOT NULL,
    params BYTEA NOT NULL,
    status BYTEA NOT NULL,
    error BYTEA NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL);
  CREATE INDEX IF NOT EXISTS shards_by_creation ON shards(created_ms, id);
  CREATE TABLE IF NOT EXISTS saves(
    shard_id BYTEA PRIMARY KEY NOT NULL,
    state BYTEA NOT NULL,
    saved_ms BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS transfers(
    id BYTEA PRIMARY KEY NOT NULL,
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    from_shard BYTEA NOT NULL,
    to_shard BYTEA NOT NULL,
    subscriber BYTEA NOT NULL,
    claims BYTEA NOT NULL,
    state BYTEA NOT NULL,
    step BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL);
  CREATE UNIQUE INDEX IF NOT EXISTS transfers_one_out
    ON transfers(from_shard, subscriber) WHERE step = 1;
  CREATE INDEX IF NOT EXISTS transfers_by_creation
    ON transfers(created_ms, seq);
)sql";

}  // namespace

Status EnsureStoreSchema(PgConn& conn) {
  const char* what = "postgres: create the store tables";
  return conn.InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(conn.Run("SELECT pg_advisory_xact_lock($1)",
                                     {PgParam::Int(kRealmSchemaLock)}, what));
    TESSERA_RETURN_IF_ERROR(conn.RunScript(kCreateTables, what));
    Result<PgResult> row = conn.Exec(
        "SELECT version FROM tessera_schema WHERE component = 'store'", {},
        what);
    if (!row.ok()) return row.status();
    if (row->rows() == 0) {
      return conn.Run(
          "INSERT INTO tessera_schema(component, version) VALUES('store', $1)",
          {PgParam::Int(kStoreSchemaVersion)}, what);
    }
    Result<int64_t> version = row->Int64(0, 0);
    if (!version.ok()) return version.status();
    if (*version > kStoreSchemaVersion) {
      return Status(StatusCode::kFailedPrecondition,
                    std::string(what) + ": the database has version " +
                        std::to_string(*version) +
                        " of the store tables, this build knows up to " +
                        std::to_string(kStoreSchemaVersion));
    }
    return Status::Ok();
  });
}

}  // namespace tessera::store::pg
