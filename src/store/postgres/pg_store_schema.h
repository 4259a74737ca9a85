// The store's tables on PostgreSQL (pg_store.h): shards, saves and
// transfers, the rows of SQLite's migrations 1 and 2 (schema.cc), plus the
// row ('store', version) in tessera_schema, the table of every tessera
// component's version (pg_realm_schema.h has 'realms').
//
// Every string the Store keeps is bytea, ids included: SQLite's TEXT keeps
// any bytes (a NUL, invalid UTF-8) and orders them byte by byte, and so
// does bytea, so both backends give the same answers for the same calls
// (in psql: convert_from(id, 'UTF8')). Integers are bigint. transfers has
// an identity column `seq` for ListTransfers' insertion order, and a
// partial unique index that holds the journal's rule of one kOut row per
// (from_shard, subscriber) in the database itself.
//
// EnsureStoreSchema creates what is missing and nothing else: every
// statement is CREATE ... IF NOT EXISTS, in one transaction that first
// takes the transaction-scoped advisory lock kRealmSchemaLock, the one key
// of every tessera schema change on a database (the realm tables and the
// store's share tessera_schema, and CREATE TABLE IF NOT EXISTS alone can
// fail with a unique violation when two sessions run it at once).
#ifndef TESSERA_STORE_POSTGRES_PG_STORE_SCHEMA_H_
#define TESSERA_STORE_POSTGRES_PG_STORE_SCHEMA_H_

#include <cstdint>

#include "common/status.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

// The version of the store's tables this build writes.
inline constexpr int64_t kStoreSchemaVersion = 1;

// Creates the store's tables if missing (idempotent, safe concurrently,
// with EnsureRealmSchema too). Errors: kFailedPrecondition when the
// database holds a newer version of them; kIo.
Status EnsureStoreSchema(PgConn& conn);

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_STORE_SCHEMA_H_
