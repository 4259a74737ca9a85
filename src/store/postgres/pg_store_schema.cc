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
  return EnsureComponentSchema(conn, "store", "store", kStoreSchemaVersion,
                               kCreateTables);
}

}  // namespace tessera::store::pg
